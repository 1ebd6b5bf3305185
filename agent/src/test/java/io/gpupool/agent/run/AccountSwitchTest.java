package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobLaunch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Which account a job runs as: a missing account is refused and listed until it exists; uid 0 only when allowed. */
class AccountSwitchTest {
    private static final String SETPRIV = "/usr/bin/setpriv";
    private final List<String> created = new ArrayList<>();

    @AfterEach
    void removeAccounts() throws Exception {
        for (String a : created) run("userdel", "--force", a); // --force: a uid-0 alias shares its uid with running processes
    }

    @Test
    void a_missing_account_is_refused_and_listed_until_an_admin_adds_it() throws Exception {
        assumeTrue(UnixAccount.effectiveUid() == 0, "adding accounts needs root (CI runs as root)");
        String name = "gptm" + ThreadLocalRandom.current().nextInt(100_000, 999_999);
        AccountSwitch s = new AccountSwitch(true, SETPRIV, "nobody", false, 0);
        AccountSwitch.Plan p = s.plan(launch(name));
        assertThat(p).isEqualTo(new AccountSwitch.Plan.Refuse("account '" + name + "' does not exist on this node", name));
        assertThat(s.missingAccounts()).containsExactly(name);
        useradd(name);
        assertThat(s.missingAccounts()).as("looked up again, found").isEmpty();
        assertThat(s.plan(launch(name))).isInstanceOf(AccountSwitch.Plan.Switch.class);
    }

    @Test
    void uid_0_under_another_name_runs_only_when_allowed() throws Exception {
        assumeTrue(UnixAccount.effectiveUid() == 0, "adding accounts needs root (CI runs as root)");
        String alias = "gptr" + ThreadLocalRandom.current().nextInt(100_000, 999_999);
        useradd("-o", "-u", "0", alias);
        assertThat(new AccountSwitch(true, SETPRIV, null, false, 0).plan(launch(alias)))
                .isInstanceOfSatisfying(AccountSwitch.Plan.Refuse.class, r -> assertThat(r.reason()).contains("never run as root").contains("uid 0"));
        assertThat(new AccountSwitch(true, SETPRIV, null, true, 0).plan(launch(alias))).isInstanceOf(AccountSwitch.Plan.Switch.class);
    }

    @Test
    void an_agent_that_is_not_root_runs_every_job_as_itself_and_says_why() {
        AccountSwitch s = new AccountSwitch(false, SETPRIV, "nobody", false, 0);
        assertThat(s.switchesAccounts()).isFalse();
        assertThat(s.whyNot()).contains("not root");
        assertThat(s.plan(launch("alice"))).isInstanceOf(AccountSwitch.Plan.AsAgent.class);
        assertThat(new AccountSwitch(true, null, "nobody", false, 0).whyNot()).contains("setpriv");
    }

    @Test
    void the_job_environment_is_applied_only_after_the_switch() {
        for (boolean envChdir : List.of(true, false)) {
            AccountSwitch s = new AccountSwitch(true, SETPRIV, null, false, 0, envChdir);
            List<String> cmd = s.commandAs(new UnixAccount("alice", 1234, 1235, "/home/alice"), Map.of("LD_PRELOAD", "/tmp/x.so"),
                    Path.of("/work/j"), List.of("python", "train.py"));
            int drop = cmd.indexOf("--");
            assertThat(cmd.subList(0, drop)).containsExactly(SETPRIV, "--reuid=1234", "--regid=1235", "--init-groups", "--inh-caps=-all", "--bounding-set=-all");
            List<String> asAlice = cmd.subList(drop + 1, cmd.size());
            if (envChdir) {
                // env enters the directory as alice, then runs the command with exactly the job's environment
                assertThat(asAlice).containsExactly("/usr/bin/env", "-i", "-C", "/work/j", "LD_PRELOAD=/tmp/x.so", "python", "train.py");
            } else {
                assertThat(asAlice).startsWith("/usr/bin/env", "-i", "LD_PRELOAD=/tmp/x.so").endsWith("/work/j", "python", "train.py");
            }
        }
    }

    private static JobLaunch launch(String account) {
        return new JobLaunch("j", 0, List.of("true"), Map.of(), null, List.of(), null, account);
    }

    private void useradd(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin"));
        cmd.addAll(List.of(args));
        run(cmd.toArray(String[]::new));
        created.add(args[args.length - 1]);
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(String.join(" ", cmd) + ": " + out).isZero();
    }
}
