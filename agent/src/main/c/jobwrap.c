/*
 * gpupool-jobwrap: the wrapper a gpupool agent runs every job in, as one small program instead of a shell that
 * execs setpriv that execs env (io.gpupool.agent.run.NativeWrapper). It does what the shell wrapper does, in the same
 * files of the job directory, so either agent adopts the other's jobs:
 *
 *   gpupool-jobwrap JOBDIR [--account UID GID GROUPS [--own-logs] [--own-dir DIR]] [--chdir DIR] -- COMMAND [ARG...]
 *
 *   1. reads the job's environment from stdin ("NAME=VALUE\0" entries, then one empty entry), then takes /dev/null
 *      as stdin (the job's): the environment never appears in the command line other accounts can read, and nothing
 *      the job chose reaches this program's own start-up while it runs as root;
 *   2. writes its pid to JOBDIR/pid;
 *   3. joins every cgroup listed in JOBDIR/cgroups ("HIERARCHY CONTROLLERS PATH" lines), so that all the job's
 *      processes start inside (one it cannot join: its path in JOBDIR/unconfined, exit 125); hands the job's logs
 *      (its stdout and stderr, --own-logs: mode 0600) and a new directory (--own-dir: mode 0700) to the account;
 *   4. forks the command: with --account it drops every capability from the bounding and inheritable sets, takes the
 *      supplementary groups GROUPS (comma-separated gids, possibly none), the gid and the uid (real, effective and
 *      saved), then enters DIR as that account; the command gets exactly the environment read in step 1 (its PATH
 *      finds the command, as `env -i` does; a script without "#!" runs with /bin/sh, as execvp and the shells do);
 *   5. waits for it, staying alive on SIGTERM, SIGINT and SIGHUP (the stop reaches the whole process group: the
 *      command gets it, the wrapper outlives it to record its end), and writes its exit code (or 128 + the signal
 *      that ended it) as one line to JOBDIR/exit, then exits with it.
 *
 * `gpupool-jobwrap --version` prints its name and protocol version (the agent runs it once at install, so a program
 * that cannot run on this machine is never given a job).
 *
 * Exit codes of its own, before the command runs: 125 (its set-up failed: the reason on stderr, which is the job's
 * log), 126 (the command cannot be executed), 127 (no such command), as env(1) uses them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETUP_FAILED 125
#define MAX_GROUPS 65536
/* capset(2)'s ABI (linux/capability.h, version 3), spelled out so that any C library's headers build this */
#define CAPABILITY_VERSION_3 0x20080522
struct capability_header { uint32_t version; int pid; };
struct capability_data { uint32_t effective, permitted, inheritable; };

/*
 * One line on stderr (the job's log), in one write of a message formatted on the stack: the command's child shares
 * this process's memory until its exec (vfork), so it must not change stdio's or malloc's state.
 */
static void say(const char *fmt, va_list ap) {
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "gpupool-jobwrap: ");
    n += vsnprintf(msg + n, sizeof msg - n - 1, fmt, ap);
    if (n > (int) sizeof msg - 2) n = sizeof msg - 2;
    msg[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, msg, n);
    (void) ignored;
}

static void warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
}

/* Says why and exits with code. */
static void fail(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    _exit(code);
}

/* The whole of descriptor fd, NUL-terminated after its end. */
static char *read_all(int fd, size_t *len) {
    size_t cap = 16384, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) fail(SETUP_FAILED, "out of memory");
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            if (!buf) fail(SETUP_FAILED, "out of memory");
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r == 0) break;
        if (r < 0) {
            if (errno == EINTR) continue;
            fail(SETUP_FAILED, "cannot read the job's environment: %s", strerror(errno));
        }
        n += (size_t) r;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The job's environment from stdin, as an envp; the agent ends it with an empty entry, so a cut one is refused. */
static char **read_environment(void) {
    size_t len;
    char *buf = read_all(STDIN_FILENO, &len);
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0) fail(SETUP_FAILED, "cannot open /dev/null: %s", strerror(errno));
    if (null != STDIN_FILENO) close(null);
    size_t count = 0;
    int ended = 0;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
        if (buf[i] == 0) {
            ended = i + 1 == len;
            break;
        }
        count++;
    }
    if (!ended) fail(SETUP_FAILED, "the job's environment was cut short (the agent stopped while starting it?)");
    char **envp = calloc(count + 1, sizeof(char *));
    if (!envp) fail(SETUP_FAILED, "out of memory");
    size_t k = 0;
    for (size_t i = 0; buf[i] != 0; i += strlen(buf + i) + 1) envp[k++] = buf + i;
    return envp;
}

/* Writes text to path (created 0666 less the umask, as a shell's redirection does); 0, or errno. */
static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return errno;
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    int err = w == (ssize_t) len ? 0 : (w < 0 ? errno : EIO);
    close(fd);
    return err;
}

static char *in_dir(const char *dir, const char *name) {
    char *p;
    if (asprintf(&p, "%s/%s", dir, name) < 0) fail(SETUP_FAILED, "out of memory");
    return p;
}

/* Step 3: this process into each recorded cgroup, before anything of the job runs. */
static void join_cgroups(const char *jobdir, pid_t self) {
    char *record = in_dir(jobdir, "cgroups");
    FILE *f = fopen(record, "re");
    if (!f) {
        if (errno == ENOENT) return;
        fail(SETUP_FAILED, "cannot read %s: %s", record, strerror(errno));
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int) self);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        char *p = line;
        for (int field = 0; field < 2; field++) { /* HIERARCHY and CONTROLLERS; the path is the rest */
            while (*p == ' ' || *p == '\t') p++;
            while (*p && *p != ' ' && *p != '\t') p++;
        }
        while (*p == ' ' || *p == '\t') p++;
        if (*p == 0) continue;
        char *procs = in_dir(p, "cgroup.procs");
        int err = write_file(procs, pid);
        if (err != 0) {
            char *marker = in_dir(jobdir, "unconfined");
            char *text;
            if (asprintf(&text, "%s\n", p) >= 0) write_file(marker, text);
            fail(SETUP_FAILED, "cannot join cgroup %s: %s", p, strerror(err));
        }
        free(procs);
    }
    fclose(f);
    free(line);
}

static long number(const char *s, const char *what) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != 0 || v < 0 || v > INT_MAX) fail(SETUP_FAILED, "%s is not a number: '%s'", what, s);
    return v;
}

/* The account's supplementary groups: GROUPS of --account, comma-separated gids (possibly none). */
static size_t parse_groups(char *list, gid_t *groups) {
    size_t ngroups = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (ngroups == MAX_GROUPS) fail(SETUP_FAILED, "more than %d groups", MAX_GROUPS);
        groups[ngroups++] = (gid_t) number(tok, "a group");
    }
    return ngroups;
}

/*
 * Step 4, in the child: the account takes over. Every step is checked: a half-switched job must never run. Only
 * system calls here (the child shares the wrapper's memory until its exec).
 */
static void become(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups) {
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) fail(SETUP_FAILED, "cannot drop capability %d: %s", cap, strerror(errno));
    }
    if (setgroups(ngroups, groups) != 0) fail(SETUP_FAILED, "setgroups: %s", strerror(errno));
    if (setresgid(gid, gid, gid) != 0) fail(SETUP_FAILED, "setresgid %u: %s", (unsigned) gid, strerror(errno));
    if (setresuid(uid, uid, uid) != 0) fail(SETUP_FAILED, "setresuid %u: %s", (unsigned) uid, strerror(errno));
    /* a change of uid empties the permitted, effective and ambient sets, not the inheritable one */
    struct capability_header header = {CAPABILITY_VERSION_3, 0};
    struct capability_data data[2] = {{0, 0, 0}, {0, 0, 0}};
    if (syscall(SYS_capset, &header, data) != 0) fail(SETUP_FAILED, "capset: %s", strerror(errno));
    if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) fail(SETUP_FAILED, "uid 0 could be regained after the switch");
}

/* Step 3's hand-over, as root: the logs through their open descriptors (no path to race), the directory made new. */
static void hand_over(uid_t uid, gid_t gid, int logs, const char *dir) {
    for (int fd = STDOUT_FILENO; logs && fd <= STDERR_FILENO; fd++) {
        if (fchown(fd, uid, gid) != 0 || fchmod(fd, 0600) != 0) fail(SETUP_FAILED, "cannot give log %d to uid %u: %s", fd, (unsigned) uid, strerror(errno));
    }
    if (dir) {
        if (mkdir(dir, 0700) != 0) fail(SETUP_FAILED, "cannot make %s: %s", dir, strerror(errno));
        if (lchown(dir, uid, gid) != 0) fail(SETUP_FAILED, "cannot give %s to uid %u: %s", dir, (unsigned) uid, strerror(errno));
    }
}

/* Runs path, or with /bin/sh where the kernel cannot (a script without "#!"), as execvp and the shells do. */
static void exec_file(const char *path, char **argv, char **envp) {
    execve(path, argv, envp);
    if (errno != ENOEXEC) return;
    int argc = 0;
    while (argv[argc]) argc++;
    char *sh_argv[argc + 2]; /* "/bin/sh" PATH ARG... NULL, on the stack (a vfork child allocates nothing) */
    sh_argv[0] = "/bin/sh";
    sh_argv[1] = (char *) path;
    for (int i = 1; i <= argc; i++) sh_argv[i + 1] = argv[i];
    execve("/bin/sh", sh_argv, envp);
    errno = ENOEXEC;
}

/*
 * Step 4's end: the command looked up in the job's PATH as execvp does (glibc's default "/bin:/usr/bin" where it has
 * none; an entry that is not there is passed over, one the account may not search remembered as EACCES), whatever the
 * C library: musl's execvp does not run a script without "#!". Exits 127 when nothing is found, 126 when something
 * found cannot run. Only system calls and the stack (vfork child).
 */
static void exec_command(char **argv, char **envp) {
    const char *file = argv[0];
    if (*file == 0) fail(127, "cannot run '': %s", strerror(ENOENT));
    if (strchr(file, '/')) {
        exec_file(file, argv, envp);
        fail(errno == ENOENT ? 127 : 126, "cannot run '%s': %s", file, strerror(errno));
    }
    const char *path = "/bin:/usr/bin";
    for (char **e = envp; *e; e++) {
        if (strncmp(*e, "PATH=", 5) == 0) {
            path = *e + 5;
            break;
        }
    }
    size_t flen = strlen(file);
    int denied = 0;
    for (const char *dir = path;; ) {
        const char *end = strchr(dir, ':');
        size_t dlen = end ? (size_t) (end - dir) : strlen(dir);
        char full[PATH_MAX];
        if (dlen + 1 + flen < sizeof full) {
            size_t at = 0;
            if (dlen > 0) { /* an empty entry is the working directory */
                memcpy(full, dir, dlen);
                full[dlen] = '/';
                at = dlen + 1;
            }
            memcpy(full + at, file, flen + 1);
            exec_file(full, argv, envp);
            if (errno == EACCES) {
                denied = 1;
            } else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV && errno != ETIMEDOUT) {
                fail(126, "cannot run '%s': %s", full, strerror(errno));
            }
        }
        if (!end) break;
        dir = end + 1;
    }
    fail(denied ? 126 : 127, "cannot run '%s': %s", file, strerror(denied ? EACCES : ENOENT));
}

static void nothing(int sig) {
    (void) sig;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        puts("gpupool-jobwrap 1");
        return 0;
    }
    if (argc < 4) fail(SETUP_FAILED, "usage: gpupool-jobwrap JOBDIR [--account UID GID GROUPS] [--chdir DIR] -- COMMAND [ARG...]");
    const char *jobdir = argv[1];
    const char *chdir_to = NULL, *own_dir = NULL;
    static gid_t groups[MAX_GROUPS];
    size_t ngroups = 0;
    int account = 0, own_logs = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--account") == 0 && i + 3 < argc) {
            account = 1;
            uid = (uid_t) number(argv[++i], "the uid");
            gid = (gid_t) number(argv[++i], "the gid");
            ngroups = parse_groups(argv[++i], groups);
        } else if (strcmp(argv[i], "--chdir") == 0 && i + 1 < argc) {
            chdir_to = argv[++i];
        } else if (strcmp(argv[i], "--own-dir") == 0 && i + 1 < argc) {
            own_dir = argv[++i];
        } else if (strcmp(argv[i], "--own-logs") == 0) {
            own_logs = 1;
        } else {
            fail(SETUP_FAILED, "unknown option '%s'", argv[i]);
        }
    }
    if (i + 1 >= argc) fail(SETUP_FAILED, "no command after --");
    if ((own_logs || own_dir) && !account) fail(SETUP_FAILED, "--own-logs and --own-dir need --account");
    char **command = argv + i + 1;

    char **job_env = read_environment();
    pid_t self = getpid();
    char pid_line[32];
    snprintf(pid_line, sizeof pid_line, "%d\n", (int) self);
    char *pid_file = in_dir(jobdir, "pid");
    int err = write_file(pid_file, pid_line);
    if (err != 0) fail(SETUP_FAILED, "cannot write %s: %s", pid_file, strerror(err));
    join_cgroups(jobdir, self);
    if (account) hand_over(uid, gid, own_logs, own_dir);

    /* a stop that arrives between the fork and the handlers must not be lost by either side */
    sigset_t stops, old;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGHUP);
    sigprocmask(SIG_BLOCK, &stops, &old);
    /*
     * vfork, not fork: the child borrows this process's memory until its exec, so neither copies page tables or takes
     * copy-on-write faults (a fork was a third of this program's cost on a VM where a page fault is dear). This
     * process waits meanwhile; the child only makes system calls and formats on its own stack.
     */
    pid_t child = vfork();
    if (child < 0) fail(SETUP_FAILED, "fork: %s", strerror(errno));
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (account) become(uid, gid, groups, ngroups);
        if (chdir_to && chdir(chdir_to) != 0) fail(SETUP_FAILED, "cannot enter %s: %s", chdir_to, strerror(errno));
        exec_command(command, job_env);
    }
    struct sigaction stay = {0};
    stay.sa_handler = nothing;
    sigemptyset(&stay.sa_mask);
    sigaction(SIGTERM, &stay, NULL);
    sigaction(SIGINT, &stay, NULL);
    sigaction(SIGHUP, &stay, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);

    int status;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) fail(SETUP_FAILED, "waitpid: %s", strerror(errno));
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char rc_line[16];
    snprintf(rc_line, sizeof rc_line, "%d\n", rc);
    char *exit_file = in_dir(jobdir, "exit");
    err = write_file(exit_file, rc_line);
    if (err != 0) warn("cannot write %s: %s", exit_file, strerror(err));
    return rc;
}
