#!/usr/bin/env Rscript
# Reference values for benchlab.stats (core half), computed by R.
#
# Usage (from the repository root):
#   Rscript tests/vectors/make_vectors_core.R [path/to/shared] > tests/vectors/core_vectors.json
# Needs: Debian packages r-base-core and r-cran-boot. No other R packages: the JSON
# writer below is hand-rolled so the script runs on a bare R.
# The datasets are generated here with set.seed() (or read from ../shared) and written
# into the JSON next to the results, so the Python tests need neither R nor ../shared.

suppressPackageStartupMessages(library(boot))
args <- commandArgs(trailingOnly = TRUE)
shared <- if (length(args) >= 1) args[1] else "../shared"

# ------------------------------------------------------------------ tiny JSON writer
num <- function(x) {
  if (length(x) == 0) return("[]")
  s <- ifelse(is.na(x), "null", sprintf("%.17g", x))
  s[is.infinite(x) & x > 0] <- "\"Infinity\""
  s[is.infinite(x) & x < 0] <- "\"-Infinity\""
  s
}
to_json <- function(v) {
  if (is.null(v)) return("null")
  if (is.list(v)) {
    nm <- names(v)
    body <- vapply(seq_along(v), function(i) to_json(v[[i]]), "")
    if (is.null(nm)) return(paste0("[", paste(body, collapse = ","), "]"))
    return(paste0("{", paste0("\"", nm, "\":", body, collapse = ","), "}"))
  }
  if (is.character(v)) {
    s <- paste0("\"", gsub("\"", "\\\\\"", v), "\"")
    return(if (length(v) == 1) s else paste0("[", paste(s, collapse = ","), "]"))
  }
  if (is.logical(v) && length(v) == 1) return(if (is.na(v)) "null" else tolower(as.character(v)))
  v <- as.numeric(v)
  if (length(v) == 1 && is.null(attr(v, "keep_array"))) return(num(v))
  paste0("[", paste(num(v), collapse = ","), "]")
}
arr <- function(v) { v <- as.numeric(v); attr(v, "keep_array") <- TRUE; v }

# ------------------------------------------------------------------ datasets
set.seed(20261122)
datasets <- list()
datasets$lognormal <- rlnorm(200, meanlog = log(50000), sdlog = 0.4)   # skewed, "ns"
datasets$ties <- round(rnorm(150, mean = 100, sd = 3))                 # integer, many ties
datasets$small <- round(rexp(8, rate = 1 / 100) + 50, 3)               # n = 8
read_jaybeams <- function(path) {
  lines <- readLines(path)
  lines <- lines[!grepl("^#", lines) & nzchar(lines)]
  parts <- strsplit(lines, ",", fixed = TRUE)
  data.frame(label = vapply(parts, `[`, "", 1), value = as.numeric(vapply(parts, `[`, "", 2)))
}
jb_path <- file.path(shared, "data", "jaybeams", "workstation-results.csv")
have_jb <- file.exists(jb_path)
if (have_jb) {
  jb <- read_jaybeams(jb_path)
  datasets$jaybeams_array <- jb$value[jb$label == "array"]
  datasets$jaybeams_map <- jb$value[jb$label == "map"]
}

# ------------------------------------------------------------------ deterministic
probs <- c(0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999)
describe <- function(x) {
  n <- length(x)
  lag_max <- as.integer(min(floor(10 * log10(n)), n - 1))
  a <- acf(x, plot = FALSE)$acf[, 1, 1]
  box <- lapply(c(1, 5, 10, 20), function(l) {
    l <- min(l, n - 1)
    bt <- Box.test(x, lag = l, type = "Ljung-Box")
    list(lag = l, statistic = unname(bt$statistic), p_value = bt$p.value)
  })
  list(
    n = n, mean = mean(x), sd = sd(x), min = min(x), max = max(x), median = median(x),
    quantile_probs = arr(probs), quantile_type7 = arr(quantile(x, probs, type = 7, names = FALSE)),
    mad_scaled = mad(x), mad_raw = mad(x, constant = 1), iqr = IQR(x),
    acf_lag_max = lag_max, acf = arr(a), ljung_box = box
  )
}
descriptive <- lapply(datasets, describe)

# ------------------------------------------------------------------ bootstrap
stat_funs <- list(
  mean = function(d, i) mean(d[i]),
  median = function(d, i) median(d[i]),
  sd = function(d, i) sd(d[i])
)
B <- 10000L
boot_one <- function(x, name, R, keep_t = FALSE) {
  b <- boot(x, stat_funs[[name]], R = R)
  L <- empinf(b, type = "jack")
  ci <- boot.ci(b, conf = 0.95, type = c("norm", "basic", "perc"))
  # R's default BCa (regression influence values) fails ("'a' is NA") when n is small or
  # the statistic is flat in the regression; recorded as null then.
  # The regression estimate fits an R x n linear model: only affordable for small n.
  ci_reg <- if (length(x) > 500) NULL else
    tryCatch(boot.ci(b, conf = 0.95, type = "bca")$bca[4:5], error = function(e) NULL)
  # With heavy ties (median of integer data) every jackknife value equals t0 and R stops
  # with "'a' is NA"; benchlab raises InvalidSampleError there. Recorded as null.
  ci_jack <- tryCatch(boot.ci(b, conf = 0.95, type = "bca", L = L)$bca[4:5],
                      error = function(e) NULL)
  out <- list(
    statistic = name, R = R, t0 = b$t0, t_mean = mean(b$t), t_sd = sd(b$t),
    normal = arr(ci$normal[2:3]), basic = arr(ci$basic[4:5]), percentile = arr(ci$percent[4:5]),
    bca_default_L = if (is.null(ci_reg)) NULL else arr(ci_reg), bca_jack_L = if (is.null(ci_jack)) NULL else arr(ci_jack),
    acceleration_jack = if (sum(L^2) > 0) sum(L^3) / (6 * sum(L^2)^1.5) else NULL
  )
  if (keep_t) out$t <- arr(b$t[, 1])
  out
}
boot_sets <- list(lognormal = datasets$lognormal, ties = datasets$ties, small = datasets$small)
if (have_jb) {
  # R's boot builds an n x R index matrix; the first 5000 values keep it fast. Subsample
  # documented in tests/vectors/README.md.
  boot_sets$jaybeams_array_first5000 <- datasets$jaybeams_array[1:5000]
}
bootstrap <- list()
set.seed(1)
for (ds in names(boot_sets)) {
  for (name in names(stat_funs)) {
    bootstrap[[length(bootstrap) + 1]] <- c(list(dataset = ds), boot_one(boot_sets[[ds]], name, B))
  }
}
# Replicates exported (R = 1999 so that (R + 1) * 0.025 is an integer: exercises both
# branches of norm.inter) to check the interval arithmetic exactly.
set.seed(2)
exact_cases <- list(
  c(list(dataset = "lognormal"), boot_one(datasets$lognormal, "mean", 1999L, keep_t = TRUE)),
  c(list(dataset = "ties"), boot_one(datasets$ties, "median", 1999L, keep_t = TRUE)),
  c(list(dataset = "small"), boot_one(datasets$small, "sd", 1999L, keep_t = TRUE))
)

# two-sample, resampled within each group (strata)
two_sample <- list()
if (have_jb) {
  xs <- datasets$jaybeams_array[1:3000]
  ys <- datasets$jaybeams_map[1:3000]
  grp <- rep(1:2, c(length(xs), length(ys)))
  two_funs <- list(
    median_ratio = function(d, i) { g <- grp[i]; v <- d[i]; median(v[g == 2]) / median(v[g == 1]) },
    mean_diff = function(d, i) { g <- grp[i]; v <- d[i]; mean(v[g == 2]) - mean(v[g == 1]) }
  )
  set.seed(3)
  for (name in names(two_funs)) {
    b <- boot(c(xs, ys), two_funs[[name]], R = B, strata = grp)
    L <- empinf(b, type = "jack")
    ci <- boot.ci(b, conf = 0.95, type = c("norm", "basic", "perc"))
    ci_jack <- boot.ci(b, conf = 0.95, type = "bca", L = L)
    two_sample[[length(two_sample) + 1]] <- list(
      x = "jaybeams_array_first3000", y = "jaybeams_map_first3000", statistic = name, R = B,
      t0 = b$t0, t_sd = sd(b$t), normal = arr(ci$normal[2:3]), basic = arr(ci$basic[4:5]),
      percentile = arr(ci$percent[4:5]), bca_jack_L = arr(ci_jack$bca[4:5]))
  }
}

# ------------------------------------------------------------------ correlation
set.seed(4)
cx <- datasets$lognormal[1:100]
cy <- cx * exp(rnorm(100, 0, 0.3))
tx <- datasets$ties[1:60]
ty <- round(tx + rnorm(60, 0, 3))
cor_case <- function(x, y, label) {
  p <- cor.test(x, y, method = "pearson")
  s <- suppressWarnings(cor.test(x, y, method = "spearman", exact = FALSE))
  list(label = label, x = arr(x), y = arr(y),
       pearson = list(r = unname(p$estimate), p_value = p$p.value, conf_int = arr(p$conf.int),
                      statistic = unname(p$statistic)),
       spearman = list(rho = unname(s$estimate), p_value = s$p.value, statistic = unname(s$statistic)))
}
correlation <- list(cor_case(cx, cy, "lognormal_pairs"), cor_case(tx, ty, "tied_pairs"))

# ------------------------------------------------------------------ p.adjust
pv <- c(0.01, 0.02, 0.03, 0.04, 0.05, 0.2, 0.5, 0.001, 0.0001, 0.8, 0.04, 0.04, 1, 0.0499)
padjust <- list(p = arr(pv), holm = arr(p.adjust(pv, "holm")), BH = arr(p.adjust(pv, "BH")))

# ------------------------------------------------------------------ TOST (Welch)
set.seed(5)
ex <- rlnorm(80, log(1000), 0.05)
ey <- rlnorm(90, log(1005), 0.05)
tost_case <- function(x, y, pct, alpha = 0.05) {
  delta <- pct / 100 * mean(x)
  lo <- t.test(y, x, mu = -delta, alternative = "greater", var.equal = FALSE)
  hi <- t.test(y, x, mu = delta, alternative = "less", var.equal = FALSE)
  ci <- t.test(y, x, var.equal = FALSE, conf.level = 1 - 2 * alpha)$conf.int
  list(margin_percent = pct, alpha = alpha, delta = delta, p_lower = lo$p.value,
       p_upper = hi$p.value, p_value = max(lo$p.value, hi$p.value),
       interval = arr(ci), df = unname(lo$parameter))
}
tost <- list(x = arr(ex), y = arr(ey), cases = list(tost_case(ex, ey, 2), tost_case(ex, ey, 0.5)))

out <- list(
  generator = "tests/vectors/make_vectors_core.R",
  r_version = R.version.string,
  boot_version = as.character(packageVersion("boot")),
  jaybeams_source = if (have_jb) "../shared/data/jaybeams/workstation-results.csv" else NULL,
  datasets = lapply(datasets, arr),
  descriptive = descriptive,
  bootstrap = bootstrap,
  bootstrap_exact = exact_cases,
  bootstrap_two_sample = two_sample,
  correlation = correlation,
  p_adjust = padjust,
  tost = tost
)
cat(to_json(out), "\n", sep = "")
