/*
 * benchlab exec helper: run commands one at a time and report each one's own
 * resource usage.
 *
 * Why a separate C program: a child spawned from Python inherits, at exec, the
 * high-water RSS of the mm it replaces (Python's, with CLONE_VM posix_spawn), so
 * ru_maxrss of /bin/true would read as tens or hundreds of MB.  This helper is
 * tiny; it starts the target from its own small mm (clone with CLONE_VM |
 * CLONE_VFORK like glibc's posix_spawn, or fork() with -F), so the target's
 * ru_maxrss is its own.  It also takes the timestamps as close to clone/wait4 as
 * possible.
 *
 * Why a long-lived server: the first clone+exec+wait4 from a freshly exec'd
 * process is measurably slower (about +0.2 ms on an idle machine, several ms
 * under load) than later ones, so one helper per harness thread serves all runs.
 *
 * Usage (started and driven by benchlab/measure/spawn.py):
 *   exec_helper REQUEST_FD RESULT_FD
 * Each request on REQUEST_FD: a header of three native uint32 (nargs, nenv,
 * nbytes) then nbytes of NUL-terminated strings: nargs option/argv tokens
 *   [-F] [-d CWD] [-i IN] [-o OUT] [-e ERR] [-t TIMEOUT_NS] [-c CPU,CPU,...]
 *   [-g CGROUP_PROCS]... [-l RESOURCE:VALUE]... -- ARGV...
 * followed by nenv "NAME=value" strings: the target's complete environment
 * (argv[0] is looked up in its PATH).  For each request, exactly one line of
 * space-separated key=value pairs is written to RESULT_FD.  EOF on REQUEST_FD,
 * SIGTERM, SIGINT or SIGHUP (or the harness thread dying) ends the helper; a
 * running target's whole process group is SIGKILLed first.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CGROUPS 16
#define MAX_RLIMITS 16

extern char **environ;

/* Child-setup failures travel back on a CLOEXEC pipe as this fixed record:
 * an empty pipe after the child is gone means exec succeeded. */
struct child_failure {
    int stage;
    int index; /* which cgroup/rlimit entry failed */
    int err;   /* errno */
};

enum stage {
    STAGE_NONE = 0,
    STAGE_SETPGID,
    STAGE_CGROUP,
    STAGE_AFFINITY,
    STAGE_RLIMIT,
    STAGE_CHDIR,
    STAGE_DUP,
    STAGE_EXEC,
    STAGE_STDIN,
    STAGE_STDOUT,
    STAGE_STDERR,
    STAGE_FORK,
    STAGE_PIPE,
    STAGE_USAGE,
    STAGE_SIGMASK,
};

static const char *const stage_names[] = {
    "none", "setpgid", "cgroup", "affinity", "rlimit", "chdir", "dup", "exec",
    "stdin", "stdout", "stderr", "fork", "pipe", "usage", "sigmask",
};

static volatile sig_atomic_t target_pid = 0;
static volatile sig_atomic_t timed_out = 0;
static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGALRM)
        timed_out = 1;
    else
        interrupted = sig;
    /* The target leads its own process group; killing the group takes down
     * everything it started.  Outside a run target_pid is 0: nothing to kill. */
    if (target_pid > 0)
        kill(-(pid_t)target_pid, SIGKILL);
    errno = saved;
}

static const int handled_signals[] = {SIGALRM, SIGINT, SIGTERM, SIGHUP};
#define N_HANDLED (sizeof handled_signals / sizeof handled_signals[0])

static int result_fd = -1;

/* write(2) the whole buffer, retrying on EINTR and short writes. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The request pipe's bytes read so far (a request is read whole, usually in one read(2):
 * header and body arrive together); inbuf[0..inbuf_len) are unconsumed. */
static char *inbuf;
static size_t inbuf_cap, inbuf_len;

/* Hold at least need bytes (and room for one more) at inbuf: 0 done, 1 clean EOF before
 * any byte, -1 error/short/out of memory. */
static int fill(int fd, size_t need)
{
    if (need + 1 > inbuf_cap) {
        size_t cap = inbuf_cap ? inbuf_cap : 65536;
        while (cap < need + 1)
            cap *= 2;
        char *bigger = realloc(inbuf, cap);
        if (bigger == NULL)
            return -1;
        inbuf = bigger;
        inbuf_cap = cap;
    }
    while (inbuf_len < need) {
        ssize_t n = read(fd, inbuf + inbuf_len, inbuf_cap - inbuf_len);
        if (n < 0) {
            if (errno == EINTR && !interrupted)
                continue;
            return -1;
        }
        if (n == 0)
            return inbuf_len == 0 ? 1 : -1;
        inbuf_len += (size_t)n;
    }
    return 0;
}

static long long ts_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return -1;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int report_error(int stage, int index, int err)
{
    char line[128];
    int n = snprintf(line, sizeof line, "status=error stage=%s index=%d errno=%d\n",
                     stage_names[stage], index, err);
    return write_all(result_fd, line, (size_t)n);
}

static int parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* "0,2,5" -> cpu set; returns -1 on a malformed list. */
static int parse_cpus(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s) {
        char *end;
        errno = 0;
        long cpu = strtol(s, &end, 10);
        if (errno != 0 || end == s || cpu < 0 || cpu >= CPU_SETSIZE)
            return -1;
        CPU_SET((int)cpu, set);
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        s = end;
    }
    return 0;
}

static int open_cloexec(const char *path, int flags)
{
    int fd;
    do {
        fd = open(path, flags | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* /dev/null, opened once for reading and once for writing: the default stdin, stdout and
 * stderr of every run, so that a run redirecting nothing opens and closes no file.  A target
 * shares the open file description with later runs; the only state it could change on it (its
 * status flags, e.g. O_NONBLOCK) changes nothing on /dev/null. */
static int devnull_r = -1, devnull_w = -1;

/* A run's redirection: the helper's own /dev/null for "/dev/null" (the default), else the
 * file opened now.  -1 with errno when it cannot be opened. */
static int open_redirect(const char *path, int flags)
{
    if (strcmp(path, "/dev/null") == 0) {
        int *cached = (flags & O_ACCMODE) == O_RDONLY ? &devnull_r : &devnull_w;
        if (*cached < 0)
            *cached = open_cloexec(path, flags & O_ACCMODE);
        return *cached;
    }
    return open_cloexec(path, flags);
}

/* Close a redirection after its run unless it is the helper's kept /dev/null. */
static void close_redirect(int *fd)
{
    if (*fd >= 0 && *fd != devnull_r && *fd != devnull_w)
        close(*fd);
    *fd = -1;
}

/* ---- the run being prepared; globals because the child may share our memory ---- */

static const char *cwd;
static const char *cgroups[MAX_CGROUPS];
static int n_cgroups;
/* Where this helper goes back to after a run (one cgroup.procs per hierarchy).  When given,
 * the helper joins the run's cgroups itself before the clock starts, the child inherits the
 * membership, and the helper returns after the clock stops: attaching a task to a v1 cgroup
 * can wait for an RCU grace period (milliseconds), which must not be measured as the run. */
static const char *home_cgroups[MAX_CGROUPS];
static int n_home_cgroups;
static int helper_joined;
static int rl_res[MAX_RLIMITS];
static long long rl_val[MAX_RLIMITS];
static int n_rlimits;
static int in_fd = -1, out_fd = -1, err_fd = -1;
static int fail_pipe[2] = {-1, -1};
static char **target_argv;
/* With CLONE_VM the child writes its failure here, where the helper reads it once clone()
 * returns (CLONE_VFORK: the child has exec'd or exited by then), as glibc's posix_spawn
 * does; a fork()ed child (-F) shares no memory and writes it to fail_pipe instead. */
static volatile struct child_failure shared_failure;
static int child_shares_memory;

/* Write a pid to a cgroup.procs file; 0 or -1 with errno. */
static int write_pid(const char *procs, pid_t pid)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%d\n", (int)pid);
    int fd = open_cloexec(procs, O_WRONLY);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, buf, (size_t)len);
    int err = errno;
    if (close(fd) != 0 && rc == 0)
        return -1;
    errno = err;
    return rc;
}

/* Leave the run's cgroups for the ones this helper came from (best effort: a failure only
 * means the next run's leaf removal finds the helper inside and the harness replaces it). */
static void go_home(void)
{
    for (int i = 0; i < n_home_cgroups; i++)
        (void)write_pid(home_cgroups[i], getpid());
}

/* In the child: report the failed stage and exit without running atexit handlers. */
static void child_fail(int stage, int index)
{
    struct child_failure f = {stage, index, errno};
    if (child_shares_memory) {
        shared_failure.index = f.index;
        shared_failure.err = f.err;
        shared_failure.stage = f.stage;
    } else {
        write_all(fail_pipe[1], (const char *)&f, sizeof f);
    }
    _exit(127);
}

static int child_main(void *unused)
{
    (void)unused;
    /* Our handlers must never run in the child (it may share our memory); all
     * signals stay blocked until they are back to default. */
    for (size_t i = 0; i < N_HANDLED; i++)
        signal(handled_signals[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        child_fail(STAGE_SIGMASK, 0);
    if (setpgid(0, 0) != 0)
        child_fail(STAGE_SETPGID, 0);
    /* Join the cgroups first so every later instruction is accounted there (unless the
     * helper joined them before the clock and the child inherited the membership). */
    if (n_cgroups > 0 && !helper_joined) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
        for (int i = 0; i < n_cgroups; i++) {
            int fd = open_cloexec(cgroups[i], O_WRONLY);
            if (fd < 0 || write_all(fd, buf, (size_t)len) != 0)
                child_fail(STAGE_CGROUP, i);
            if (close(fd) != 0)
                child_fail(STAGE_CGROUP, i);
        }
    }
    for (int i = 0; i < n_rlimits; i++) {
        struct rlimit rl;
        if (getrlimit(rl_res[i], &rl) != 0)
            child_fail(STAGE_RLIMIT, i);
        rl.rlim_cur = (rlim_t)rl_val[i];
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
            rl.rlim_max = rl.rlim_cur;
        if (setrlimit(rl_res[i], &rl) != 0)
            child_fail(STAGE_RLIMIT, i);
    }
    if (cwd != NULL && chdir(cwd) != 0)
        child_fail(STAGE_CHDIR, 0);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        child_fail(STAGE_DUP, 0);
    execvp(target_argv[0], target_argv);
    child_fail(STAGE_EXEC, 0);
    return 127;
}

/* Stack for the CLONE_VM child; only the pages it touches become resident. */
/* ---- no process outlives its run ----
 * The helper is the child subreaper (PR_SET_CHILD_SUBREAPER) of everything it starts, so a
 * target's descendant that is orphaned (its parent exited) -- including one that called
 * setsid() or ignores SIGTERM, which the process-group kill cannot reach -- becomes the
 * helper's child.  After each run, every such child is SIGKILLed and reaped, round after round
 * (killing one orphans its own children to us), until the helper has no children left. */

/* The helper's current children; from /proc/self/task/<pid>/children when the kernel has it,
 * else by scanning /proc/<pid>/stat for our pid as parent.  Returns how many were stored. */
static int list_children(pid_t *out, int max, int scan)
{
    char path[64];
    int n = 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    int fd = scan ? -1 : open_cloexec(path, O_RDONLY);
    if (fd >= 0) {
        char buf[16384];
        size_t used = 0;
        ssize_t got;
        while (used < sizeof buf - 1 &&
               ((got = read(fd, buf + used, sizeof buf - 1 - used)) > 0 ||
                (got < 0 && errno == EINTR)))
            if (got > 0)
                used += (size_t)got;
        close(fd);
        buf[used] = '\0';
        for (char *p = buf; *p && n < max;) {
            while (*p == ' ' || *p == '\n')
                p++;
            if (!isdigit((unsigned char)*p))
                break;
            out[n++] = (pid_t)strtol(p, &p, 10);
        }
        return n;
    }
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return 0;
    struct dirent *entry;
    pid_t self = getpid();
    while ((entry = readdir(proc)) != NULL && n < max) {
        if (!isdigit((unsigned char)entry->d_name[0]))
            continue;
        char stat_path[300], text[512];
        snprintf(stat_path, sizeof stat_path, "/proc/%s/stat", entry->d_name);
        int sfd = open_cloexec(stat_path, O_RDONLY);
        if (sfd < 0)
            continue;
        ssize_t len = read(sfd, text, sizeof text - 1);
        close(sfd);
        if (len <= 0)
            continue;
        text[len] = '\0';
        /* "pid (comm) S ppid ...": comm may contain spaces and ')', so parse after the last ')'. */
        char *close_paren = strrchr(text, ')');
        char state;
        int ppid;
        if (close_paren && sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 && ppid == self)
            out[n++] = (pid_t)atoi(entry->d_name);
    }
    closedir(proc);
    return n;
}

/* Whether a process is already on its way out: a zombie, or SIGKILL pending (the run's
 * process-group kill reached it before it was orphaned to us).  Such a process is reaped but
 * not counted as a descendant this helper killed. */
static int already_dying(pid_t pid)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open_cloexec(path, O_RDONLY);
    if (fd < 0)
        return 1; /* gone already */
    ssize_t len = read(fd, text, sizeof text - 1);
    close(fd);
    if (len <= 0)
        return 1;
    text[len] = '\0';
    char state = '?';
    const char *line = strstr(text, "\nState:");
    if (line && sscanf(line + 7, " %c", &state) == 1 && state == 'Z')
        return 1;
    static const char *const pending[] = {"\nShdPnd:", "\nSigPnd:"};
    for (size_t k = 0; k < sizeof pending / sizeof pending[0]; k++) {
        line = strstr(text, pending[k]);
        if (line && (strtoull(line + strlen(pending[k]), NULL, 16) & (1ULL << (SIGKILL - 1))))
            return 1;
    }
    return 0;
}

/* waitpid(-1, status, WNOHANG), retried on EINTR: a child's pid, 0 (children, none exited) or
 * -1 with errno ECHILD (no children at all). */
static pid_t reap_any_nohang(int *status)
{
    pid_t pid;
    do {
        pid = waitpid(-1, status, WNOHANG);
    } while (pid < 0 && errno == EINTR);
    return pid;
}

/* SIGKILL and reap every remaining child (= orphaned descendant of a finished run); returns how
 * many were alive (not already dying, see already_dying) and died of that SIGKILL. */
static int kill_descendants(void)
{
    int killed = 0, scan = 0;
    /* Most runs leave nothing: then waitpid says so (ECHILD) in one call, without reading
     * the children list (three calls). */
    int first_status;
    pid_t first = reap_any_nohang(&first_status);
    if (first < 0)
        return 0; /* ECHILD: no children at all */
    /* else one had died by itself (reaped, not counted) or one is alive: look below */
    for (int round = 0; round < 100000; round++) {
        pid_t kids[512];
        int n = list_children(kids, (int)(sizeof kids / sizeof kids[0]), scan);
        if (n == 0) {
            /* The list can miss a child that was reparented a moment ago: waitpid cannot. */
            int status;
            pid_t late = reap_any_nohang(&status);
            if (late < 0)
                return killed; /* ECHILD: no children at all */
            if (late == 0) {
                /* A live child the fast list did not show: look through /proc next round. */
                scan = 1;
                continue;
            }
            continue; /* it had died by itself (or of the run's group kill): reaped, not counted */
        }
        scan = 0;
        char dying[512];
        for (int i = 0; i < n; i++) {
            dying[i] = (char)already_dying(kids[i]);
            kill(kids[i], SIGKILL);
        }
        for (int i = 0; i < n; i++) {
            int status;
            pid_t got;
            do {
                got = waitpid(kids[i], &status, 0);
            } while (got < 0 && errno == EINTR);
            if (got == kids[i] && !dying[i] && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                killed++;
        }
    }
    return killed;
}

static char child_stack[256 * 1024] __attribute__((aligned(64)));

static cpu_set_t original_affinity;
static int affinity_changed;

/* Run one request (tokens: options, "--", argv, NULL, env..., NULL) and write its result
 * line.  Returns -1 only when the result cannot be written (the harness is gone). */
static int run_one(char **tokens, char **envp)
{
    const char *in_path = "/dev/null", *out_path = "/dev/null", *err_path = "/dev/null",
               *cpus_arg = NULL;
    long long timeout_ns = 0;
    int use_fork = 0;
    cpu_set_t cpus;

    cwd = NULL;
    n_cgroups = 0;
    n_home_cgroups = 0;
    helper_joined = 0;
    n_rlimits = 0;
    target_argv = NULL;
    for (char **t = tokens; *t != NULL; t++) {
        const char *opt = *t;
        if (strcmp(opt, "--") == 0) {
            target_argv = t + 1;
            break;
        }
        if (strcmp(opt, "-F") == 0) {
            use_fork = 1;
            continue;
        }
        const char *arg = t[1];
        if (arg == NULL || opt[0] != '-' || opt[1] == '\0' || opt[2] != '\0')
            return report_error(STAGE_USAGE, 0, EINVAL);
        t++;
        switch (opt[1]) {
        case 'd': cwd = arg; break;
        case 'i': in_path = arg; break;
        case 'o': out_path = arg; break;
        case 'e': err_path = arg; break;
        case 't':
            if (parse_ll(arg, &timeout_ns) != 0 || timeout_ns < 0)
                return report_error(STAGE_USAGE, 0, EINVAL);
            break;
        case 'c':
            cpus_arg = arg;
            if (parse_cpus(arg, &cpus) != 0)
                return report_error(STAGE_USAGE, 0, EINVAL);
            break;
        case 'g':
            if (n_cgroups == MAX_CGROUPS)
                return report_error(STAGE_USAGE, 0, E2BIG);
            cgroups[n_cgroups++] = arg;
            break;
        case 'G':
            if (n_home_cgroups == MAX_CGROUPS)
                return report_error(STAGE_USAGE, 0, E2BIG);
            home_cgroups[n_home_cgroups++] = arg;
            break;
        case 'l': {
            const char *colon = strchr(arg, ':');
            char res_text[24];
            long long res;
            if (n_rlimits == MAX_RLIMITS || colon == NULL || colon - arg >= (long)sizeof res_text)
                return report_error(STAGE_USAGE, 0, EINVAL);
            memcpy(res_text, arg, (size_t)(colon - arg));
            res_text[colon - arg] = '\0';
            if (parse_ll(res_text, &res) != 0 || parse_ll(colon + 1, &rl_val[n_rlimits]) != 0)
                return report_error(STAGE_USAGE, 0, EINVAL);
            rl_res[n_rlimits++] = (int)res;
            break;
        }
        default:
            return report_error(STAGE_USAGE, 0, EINVAL);
        }
    }
    if (target_argv == NULL || target_argv[0] == NULL)
        return report_error(STAGE_USAGE, 0, EINVAL);

    /* Affinity is set here, before the clock, and inherited by the child: the
     * kernel's answer (sched_getaffinity) is exactly what the target gets, and
     * the syscall is not part of the measured time.  Restored for the next run. */
    cpu_set_t applied;
    if (cpus_arg != NULL) {
        affinity_changed = 1;
        if (sched_setaffinity(0, sizeof cpus, &cpus) != 0 ||
            sched_getaffinity(0, sizeof applied, &applied) != 0)
            return report_error(STAGE_AFFINITY, 0, errno);
    } else if (affinity_changed) {
        if (sched_setaffinity(0, sizeof original_affinity, &original_affinity) != 0)
            return report_error(STAGE_AFFINITY, 0, errno);
        affinity_changed = 0;
    }

    /* Open the redirections before the clock starts: not part of the run. */
    int rc = 0;
    if ((in_fd = open_redirect(in_path, O_RDONLY)) < 0) {
        rc = report_error(STAGE_STDIN, 0, errno);
        goto out;
    }
    if ((out_fd = open_redirect(out_path, O_WRONLY | O_CREAT | O_TRUNC)) < 0) {
        rc = report_error(STAGE_STDOUT, 0, errno);
        goto out;
    }
    if ((err_fd = open_redirect(err_path, O_WRONLY | O_CREAT | O_TRUNC)) < 0) {
        rc = report_error(STAGE_STDERR, 0, errno);
        goto out;
    }
    child_shares_memory = !use_fork;
    memset((void *)&shared_failure, 0, sizeof shared_failure);
    if (use_fork && pipe2(fail_pipe, O_CLOEXEC) != 0) {
        rc = report_error(STAGE_PIPE, 0, errno);
        goto out;
    }

    if (n_cgroups > 0 && n_home_cgroups > 0) {
        for (int i = 0; i < n_cgroups; i++) {
            if (write_pid(cgroups[i], getpid()) != 0) {
                int err = errno;
                go_home();
                rc = report_error(STAGE_CGROUP, i, err);
                goto out;
            }
        }
        helper_joined = 1;
    }

    struct itimerval timer, off;
    memset(&timer, 0, sizeof timer);
    memset(&off, 0, sizeof off);
    timer.it_value.tv_sec = (time_t)(timeout_ns / 1000000000LL);
    timer.it_value.tv_usec = (suseconds_t)((timeout_ns % 1000000000LL) / 1000);
    if (timeout_ns > 0 && timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
        timer.it_value.tv_usec = 1; /* sub-microsecond timeout: still a timeout */

    /* The target gets this process's environment (execvp searches its PATH). */
    environ = envp;
    timed_out = 0;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);

    long long start_unix_ns = ts_ns(CLOCK_REALTIME);
    long long start_mono_ns = ts_ns(CLOCK_MONOTONIC);
    if (timeout_ns > 0 && setitimer(ITIMER_REAL, &timer, NULL) != 0) {
        rc = report_error(STAGE_FORK, 0, errno);
        goto out;
    }
    if (sigprocmask(SIG_SETMASK, &all, NULL) != 0) {
        rc = report_error(STAGE_SIGMASK, 0, errno);
        goto out;
    }
    pid_t pid;
    if (use_fork) {
        pid = fork();
        if (pid == 0)
            _exit(child_main(NULL));
    } else {
        /* Like glibc's posix_spawn: no page-table copy, no copy-on-write faults. */
        pid = clone(child_main, child_stack + sizeof child_stack,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    }
    int clone_errno = errno;
    if (pid > 0) {
        target_pid = pid;
        /* A fork()ed child may not have run yet: set its group from this side too, so
         * kill(-pid) can never miss (failing is expected when it already exec'd, EACCES, or is
         * gone, ESRCH).  A CLONE_VFORK child has called setpgid(0, 0) (or exited) before clone
         * returned, so there it would only fail with EACCES. */
        if (use_fork)
            (void)setpgid(pid, pid);
        if (interrupted)
            kill(-pid, SIGKILL);
    }
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0 && pid > 0)
        kill(-pid, SIGKILL); /* cannot happen with valid arguments; never leave a target */
    if (pid < 0) {
        setitimer(ITIMER_REAL, &off, NULL);
        rc = report_error(STAGE_FORK, 0, clone_errno);
        goto out;
    }
    close_fd(&fail_pipe[1]);

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t got;
    do {
        got = wait4(pid, &status, 0, &ru);
    } while (got < 0 && errno == EINTR);
    long long end_mono_ns = ts_ns(CLOCK_MONOTONIC);
    int wait_errno = errno;
    if (helper_joined)
        go_home();
    target_pid = 0;
    /* Before the result line: if the harness died (SIGTERM from PR_SET_PDEATHSIG), writing to
     * its pipe ends this helper, and the orphans must be gone by then. */
    int descendants_killed = kill_descendants();
    if (timeout_ns > 0)
        setitimer(ITIMER_REAL, &off, NULL);
    if (got < 0) {
        rc = report_error(STAGE_FORK, 0, wait_errno);
        goto out;
    }

    struct child_failure failure = {0, 0, 0};
    ssize_t nread = (ssize_t)sizeof failure;
    if (use_fork) {
        do {
            nread = read(fail_pipe[0], &failure, sizeof failure);
        } while (nread < 0 && errno == EINTR);
    } else {
        failure.stage = shared_failure.stage;
        failure.index = shared_failure.index;
        failure.err = shared_failure.err;
    }

    char cpu_list[4 * CPU_SETSIZE] = "-";
    if (cpus_arg != NULL) {
        size_t used = 0;
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
            if (!CPU_ISSET(cpu, &applied))
                continue;
            int n = snprintf(cpu_list + used, sizeof cpu_list - used, "%s%d",
                             used ? "," : "", cpu);
            if (n < 0 || (size_t)n >= sizeof cpu_list - used)
                break;
            used += (size_t)n;
        }
    }

    const char *status_name;
    int exit_code = -1, term_signal = -1;
    if (nread == (ssize_t)sizeof failure && failure.stage != STAGE_NONE) {
        status_name = "error";
    } else if (WIFEXITED(status)) {
        exit_code = WEXITSTATUS(status);
        status_name = exit_code == 0 ? "ok" : "failed";
    } else if (WIFSIGNALED(status)) {
        term_signal = WTERMSIG(status);
        if (timed_out && term_signal == SIGKILL)
            status_name = "timeout";
        else if (interrupted && term_signal == SIGKILL)
            status_name = "interrupted";
        else
            status_name = "signaled";
    } else {
        status_name = "error";
    }

    char line[512 + sizeof cpu_list];
    int n = snprintf(
        line, sizeof line,
        "status=%s exit=%d signal=%d wall_ns=%lld user_ns=%lld sys_ns=%lld "
        "maxrss_kib=%ld minflt=%ld majflt=%ld nvcsw=%ld nivcsw=%ld "
        "start_mono_ns=%lld end_mono_ns=%lld start_unix_ns=%lld "
        "stage=%s index=%d errno=%d descendants=%d cpus=%s\n",
        status_name, exit_code, term_signal, end_mono_ns - start_mono_ns,
        (long long)ru.ru_utime.tv_sec * 1000000000LL + (long long)ru.ru_utime.tv_usec * 1000LL,
        (long long)ru.ru_stime.tv_sec * 1000000000LL + (long long)ru.ru_stime.tv_usec * 1000LL,
        ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw, start_mono_ns,
        end_mono_ns, start_unix_ns, stage_names[failure.stage], failure.index, failure.err,
        descendants_killed, cpu_list);
    if (n < 0 || (size_t)n >= sizeof line)
        rc = report_error(STAGE_USAGE, 0, EOVERFLOW);
    else
        rc = write_all(result_fd, line, (size_t)n);
out:
    close_redirect(&in_fd);
    close_redirect(&out_fd);
    close_redirect(&err_fd);
    close_fd(&fail_pipe[0]);
    close_fd(&fail_pipe[1]);
    return rc;
}

int main(int argc, char **argv)
{
    long long request_fd, rfd;
    if (argc != 3 || parse_ll(argv[1], &request_fd) != 0 || parse_ll(argv[2], &rfd) != 0)
        return 2;
    result_fd = (int)rfd;

    /* If the harness thread dies, stop (and take a running target down). */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
        return 2;
    /* Orphaned descendants of a run come to us, not to init: see kill_descendants(). */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 2;

    /* Nothing but 0, 1, 2 may leak into targets. */
#ifdef SYS_close_range
    syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
#endif
    if (fcntl((int)request_fd, F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(result_fd, F_SETFD, FD_CLOEXEC) != 0)
        return 2;

    /* Python ignores SIGPIPE and SIGXFSZ; ignored dispositions survive exec,
     * blocked signals too.  Targets must start with defaults. */
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        return 2;
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            signal(sig, SIG_DFL);
    }
    /* No SA_RESTART: a signal must interrupt the idle read of the next request. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_HANDLED; i++)
        if (sigaction(handled_signals[i], &sa, NULL) != 0)
            return 2;
    if (sched_getaffinity(0, sizeof original_affinity, &original_affinity) != 0)
        return 2;

    char **tokens = NULL;
    size_t tokens_cap = 0;
    while (!interrupted) {
        uint32_t header[3];
        int r = fill((int)request_fd, sizeof header);
        if (r != 0)
            return r == 1 ? 0 : 2;
        memcpy(header, inbuf, sizeof header);
        uint32_t nargs = header[0], nenv = header[1], nbytes = header[2];
        if ((size_t)nargs + nenv + 2 > tokens_cap) {
            free(tokens);
            tokens_cap = (size_t)nargs + nenv + 2;
            if ((tokens = malloc(tokens_cap * sizeof *tokens)) == NULL)
                return 2;
        }
        size_t request_end = sizeof header + (size_t)nbytes;
        if (fill((int)request_fd, request_end) != 0)
            return 2;
        /* fill() left room for this terminator; a next request's first byte (the harness never
         * sends one before the reply, but the protocol allows it) is put back after the run */
        char *body = inbuf + sizeof header;
        char after = inbuf[request_end];
        body[nbytes] = '\0';
        /* Split the NUL-terminated strings: args, NULL, env, NULL. */
        size_t pos = 0, k = 0, strings = (size_t)nargs + nenv;
        for (size_t i = 0; i < strings; i++) {
            if (pos >= nbytes)
                break;
            tokens[k++] = body + pos;
            pos += strlen(body + pos) + 1;
            if (i + 1 == nargs)
                tokens[k++] = NULL;
        }
        if (k != strings + 1 || pos != nbytes) {
            r = report_error(STAGE_USAGE, 0, EINVAL);
        } else {
            tokens[k] = NULL;
            r = run_one(tokens, tokens + nargs + 1);
        }
        if (r != 0)
            return 2;
        inbuf[request_end] = after;
        inbuf_len -= request_end;
        memmove(inbuf, inbuf + request_end, inbuf_len);
    }
    return 0;
}
