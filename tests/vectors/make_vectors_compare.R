#!/usr/bin/env Rscript
# Reference vectors for benchlab.stats comparison functions (power, rank, verdict), from R.
#
# Usage (from the repository root):
#   Rscript tests/vectors/make_vectors_compare.R [DATA_DIR] > tests/vectors/compare_vectors.json
# DATA_DIR holds the JayBeams files workstation-results.csv and vm-results.csv
# (default ../shared/data/jaybeams); when absent, the "jaybeams" section is left out.
# Set BENCHLAB_SKIP_BOOT=1 to leave out the bootstrap (about 3 minutes for the two files).
#
# Needs only base R and the recommended package "boot" (no jsonlite): the JSON is written by
# hand with 17 significant digits so that doubles round-trip exactly.
#
# What the numbers are for:
#   power    - stats::power.t.test, default tolerance (what users see) and tol = 1e-12 (the
#              exact root, to compare a tight root finder at 1e-6 relative); power for given n.
#   wilcox   - stats::wilcox.test(x, y, conf.int = TRUE) on generated data sets covering the
#              exact branch (n < 50, no ties), the normal branch (ties / n >= 50), one-sided
#              alternatives and other confidence levels, with the data written alongside.
#   wilcox_distribution - pwilcox / qwilcox values (exact null distribution of W).
#   jaybeams - the JayBeams analysis of the published data, step by step as in the post.

suppressPackageStartupMessages(library(boot))

args <- commandArgs(trailingOnly = TRUE)
data.dir <- if (length(args) >= 1) args[[1]] else file.path("..", "shared", "data", "jaybeams")
skip.boot <- nzchar(Sys.getenv("BENCHLAB_SKIP_BOOT"))

num <- function(v) {
  if (length(v) == 0) return("[]")
  s <- ifelse(is.na(v), "null",
       ifelse(is.infinite(v), ifelse(v > 0, "1e999", "-1e999"), sprintf("%.17g", v)))
  if (length(v) == 1) s else paste0("[", paste(s, collapse = ", "), "]")
}
arr <- function(v) paste0("[", paste(sprintf("%.17g", v), collapse = ", "), "]")
str <- function(s) paste0("\"", gsub("\"", "\\\\\"", s), "\"")
obj <- function(...) {
  kv <- list(...)
  paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")
}
out <- character()
emit <- function(s) out <<- c(out, s)

# ----------------------------------------------------------------------------- power.t.test
power.cases <- list(
  list(delta = 1, sd = 1, sig.level = 0.05, power = 0.8),
  list(delta = 0.5, sd = 1, sig.level = 0.05, power = 0.9),
  list(delta = 2, sd = 1, sig.level = 0.01, power = 0.95),
  list(delta = 3, sd = 1, sig.level = 0.05, power = 0.8),          # tiny n (close to 2)
  list(delta = 0.01, sd = 1, sig.level = 0.05, power = 0.8),       # n ~ 157,000
  list(delta = 20000 / 3000 * 10, sd = 197, sig.level = 0.01, power = 0.95),  # the JayBeams analysis
  list(delta = 20000 / 3000, sd = 197, sig.level = 0.01, power = 0.95),
  list(delta = 20000 / 3000 * 10, sd = 396, sig.level = 0.01, power = 0.95),
  list(delta = 20000 / 3000, sd = 396, sig.level = 0.01, power = 0.95)
)
pw <- character()
for (cs in power.cases) {
  r <- power.t.test(delta = cs$delta, sd = cs$sd, sig.level = cs$sig.level, power = cs$power)
  r.tight <- power.t.test(delta = cs$delta, sd = cs$sd, sig.level = cs$sig.level,
                          power = cs$power, tol = 1e-12)
  pw <- c(pw, obj(kind = str("n"), delta = num(cs$delta), sd = num(cs$sd),
                  sig_level = num(cs$sig.level), power = num(cs$power),
                  n_default_tol = num(r$n), n = num(r.tight$n)))
}
for (cs in list(list(n = 10, delta = 1, sd = 1, sig.level = 0.05, strict = FALSE),
                list(n = 10, delta = 1, sd = 1, sig.level = 0.05, strict = TRUE),
                list(n = 3, delta = 0.2, sd = 1, sig.level = 0.05, strict = FALSE),
                list(n = 3, delta = 0.2, sd = 1, sig.level = 0.05, strict = TRUE),
                list(n = 35000, delta = 20000 / 3000, sd = 197, sig.level = 0.01, strict = FALSE),
                list(n = 100000, delta = 20000 / 3000, sd = 396, sig.level = 0.01, strict = FALSE),
                list(n = 2.5, delta = 1.5, sd = 2, sig.level = 0.1, strict = FALSE))) {
  r <- power.t.test(n = cs$n, delta = cs$delta, sd = cs$sd, sig.level = cs$sig.level,
                    strict = cs$strict)
  pw <- c(pw, obj(kind = str("power"), n = num(cs$n), delta = num(cs$delta), sd = num(cs$sd),
                  sig_level = num(cs$sig.level), strict = if (cs$strict) "true" else "false",
                  power = num(r$power)))
}
emit(paste0("\"power\": [\n  ", paste(pw, collapse = ",\n  "), "\n]"))

# ----------------------------------------------------------------------------- wilcox.test
set.seed(20261122)
no.ties <- function(gen) {  # regenerate until the pooled sample has no ties (exact branch)
  repeat { d <- gen(); if (!anyDuplicated(c(d$x, d$y))) return(d) }
}
sets <- list(
  exact_normal_10_12 = no.ties(function() list(x = round(rnorm(10, 5), 4), y = round(rnorm(12, 6), 4))),
  exact_tiny_3_4 = no.ties(function() list(x = round(runif(3), 4), y = round(runif(4) + 0.5, 4))),
  exact_lognormal_25_40 = no.ties(function() list(x = rlnorm(25, 0, 0.4), y = rlnorm(40, 0.2, 0.4))),
  exact_49_49 = no.ties(function() list(x = rnorm(49), y = rnorm(49, 0.3))),
  exact_equal_5_5 = no.ties(function() list(x = round(rnorm(5), 3), y = round(rnorm(5), 3))),
  ties_small_15_20 = list(x = as.numeric(sample(1:10, 15, TRUE)), y = as.numeric(sample(3:12, 20, TRUE))),
  ties_exactsize_8_9 = list(x = c(1, 2, 2, 3, 5, 8, 8, 9), y = c(2, 3, 4, 4, 6, 7, 9, 10, 12)),
  normal_skewed_200_300 = list(x = rlnorm(200, 0, 0.5), y = rlnorm(300, 0.1, 0.5)),
  normal_50_10 = list(x = rnorm(50), y = rnorm(10, 1)),
  normal_tied_ints_1000_1200 = list(x = round(rlnorm(1000, 6, 0.3)), y = round(rlnorm(1200, 6.02, 0.3))),
  normal_heavy_ties_300_300 = list(x = as.numeric(sample(0:4, 300, TRUE)), y = as.numeric(sample(1:5, 300, TRUE))),
  normal_identical_dist_500_400 = list(x = rexp(500), y = rexp(400))
)
wl <- character()
for (nm in names(sets)) {
  d <- sets[[nm]]
  for (alt in c("two.sided", "less", "greater")) {
    for (cl in c(0.95, 0.9)) {
      if (alt != "two.sided" && cl != 0.95) next
      r <- suppressWarnings(wilcox.test(d$x, d$y, alternative = alt, conf.int = TRUE,
                                        conf.level = cl))
      wl <- c(wl, obj(name = str(nm), alternative = str(alt), conf_level = num(cl),
                      method = str(r$method), statistic = num(unname(r$statistic)),
                      p_value = num(r$p.value), estimate = num(unname(r$estimate)),
                      conf_int = num(as.numeric(r$conf.int)),
                      achieved_conf_level = num(attr(r$conf.int, "conf.level")),
                      x = arr(d$x), y = arr(d$y)))
    }
  }
}
# Exact distribution values (pwilcox / qwilcox) for a few sizes.
dist <- character()
for (mn in list(c(3, 4), c(10, 12), c(25, 40), c(49, 49))) {
  m <- mn[1]; n <- mn[2]
  qs <- unique(round(c(0, 1, m * n / 4, m * n / 2, 3 * m * n / 4, m * n - 1)))
  ps <- c(0.005, 0.025, 0.05, 0.5, 0.95, 0.975)
  dist <- c(dist, obj(m = num(m), n = num(n), q = arr(qs), pwilcox = arr(pwilcox(qs, m, n)),
                      pwilcox_upper = arr(pwilcox(qs, m, n, lower.tail = FALSE)),
                      p = arr(ps), qwilcox = arr(qwilcox(ps, m, n))))
}
emit(paste0("\"wilcox\": [\n  ", paste(wl, collapse = ",\n  "), "\n]"))
emit(paste0("\"wilcox_distribution\": [\n  ", paste(dist, collapse = ",\n  "), "\n]"))

# ----------------------------------------------------------------------------- the JayBeams analysis
seed.analysis <- function(path) {
  data <- read.csv(file = path, header = FALSE, comment.char = "#",
                   col.names = c("book_type", "nanoseconds"))
  data$microseconds <- data$nanoseconds / 1000.0
  a <- subset(data, book_type == "array")$microseconds
  m <- subset(data, book_type == "map")$microseconds
  max.acf.array <- max(abs(tail(acf(ts(a), plot = FALSE)$acf, -1)))
  max.acf.map <- max(abs(tail(acf(ts(m), plot = FALSE)$acf, -1)))
  t0 <- proc.time()[["elapsed"]]
  mw <- wilcox.test(microseconds ~ book_type, data = data, conf.int = TRUE)
  t.mw <- proc.time()[["elapsed"]] - t0
  fields <- list(
    n_array = num(length(a)), n_map = num(length(m)),
    summary_array = num(as.numeric(summary(a))), summary_map = num(as.numeric(summary(m))),
    max_acf_array = num(max.acf.array), max_acf_map = num(max.acf.map),
    lag_max = num(floor(10 * log10(length(a)))),
    wilcox_statistic = num(unname(mw$statistic)), wilcox_p_value = num(mw$p.value),
    wilcox_estimate = num(unname(mw$estimate)), wilcox_conf_int = num(as.numeric(mw$conf.int)),
    wilcox_seconds = num(t.mw))
  if (!skip.boot) {
    sd.estimator <- function(D, i) sd(D[i, "microseconds"])
    t0 <- proc.time()[["elapsed"]]
    set.seed(1)
    b.array <- boot(data = subset(data, book_type == "array"), R = 10000, statistic = sd.estimator)
    ci.array <- boot.ci(b.array, type = c("perc", "norm", "basic"))
    b.map <- boot(data = subset(data, book_type == "map"), R = 10000, statistic = sd.estimator)
    ci.map <- boot.ci(b.map, type = c("perc", "norm", "basic"))
    t.boot <- proc.time()[["elapsed"]] - t0
    estimated.sd <- ceiling(max(ci.map$percent[[4]], ci.array$percent[[4]],
                                ci.map$basic[[4]], ci.array$basic[[4]],
                                ci.map$normal[[3]], ci.array$normal[[3]]))
    ci <- function(c) num(c(c$percent[4:5], c$basic[4:5], c$normal[2:3]))
    fields <- c(fields, list(
      boot_sd_t0 = num(c(b.array$t0, b.map$t0)),
      boot_sd_se = num(c(sd(b.array$t), sd(b.map$t))),
      boot_ci_array_perc_basic_norm = ci(ci.array), boot_ci_map_perc_basic_norm = ci(ci.map),
      estimated_sd = num(estimated.sd), boot_seconds = num(t.boot)))
    min.delta <- 1.0 / (3 * 1000.0) * 20000
    r10 <- power.t.test(delta = 10 * min.delta, sd = estimated.sd, sig.level = 0.01, power = 0.95)
    r1 <- power.t.test(delta = min.delta, sd = estimated.sd, sig.level = 0.01, power = 0.95)
    fields <- c(fields, list(
      power_n_10x = num(r10$n), power_n_1x = num(r1$n),
      required_nsamples = num(max(5000, 1000 * ceiling(1.15 * r10$n / 1000))),
      desired_nsamples = num(max(5000, 1000 * ceiling(1.15 * r1$n / 1000)))))
  }
  do.call(obj, fields)
}
files <- c(workstation = "workstation-results.csv", vm = "vm-results.csv")
if (all(file.exists(file.path(data.dir, files)))) {
  jb <- character()
  for (k in names(files)) {
    jb <- c(jb, sprintf("\"%s\": %s", k, seed.analysis(file.path(data.dir, files[[k]]))))
  }
  emit(paste0("\"jaybeams\": {\n  ", paste(jb, collapse = ",\n  "), "\n}"))
}

emit(sprintf("\"generated_by\": %s", str(paste(R.version.string, "boot", packageVersion("boot")))))
cat("{\n", paste(out, collapse = ",\n"), "\n}\n", sep = "")
