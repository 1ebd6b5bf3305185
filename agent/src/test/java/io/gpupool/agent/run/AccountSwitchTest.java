package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobLaunch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Which account a job runs as: a missing account is refused and listed until it exists; uid 0 only when allowed. */
class AccountSwitchTest {
    private final List<String> created = new ArrayList<>();

    @AfterEach
    void removeAccounts() throws Exception {
        for (String a : created) run("userdel", "--force", a); // --force: a uid-0 alias shares its uid with running processes
    }

    @Test
    void a_missing_account_is_refused_and_listed_until_an_admin_adds_it() throws Exception {
        assumeTrue(UnixAccount.effectiveUid() == 0, "adding accounts needs root (CI runs as root)");
        String name = "gptm" + ThreadLocalRandom.current().nextInt(100_000, 999_999);
        AccountSwitch s = new AccountSwitch(true, null, "nobody", false, 0);
        AccountSwitch.Plan p = s.plan(launch(name));
        assertThat(p).isEqualTo(new AccountSwitch.Plan.Refuse("account '" + name + "' does not exist on this node", name));
        assertThat(s.missingAccounts()).containsExactly(name);
        useradd(name);
        assertThat(s.missingAccounts()).as("looked up again, found").isEmpty();
        assertThat(s.plan(launch(name))).isInstanceOfSatisfying(AccountSwitch.Plan.Switch.class,
                sw -> assertThat(sw.groups()).as("its groups, the primary one among them").contains(sw.account().gid()));
    }

    @Test
    void uid_0_under_another_name_runs_only_when_allowed() throws Exception {
        assumeTrue(UnixAccount.effectiveUid() == 0, "adding accounts needs root (CI runs as root)");
        String alias = "gptr" + ThreadLocalRandom.current().nextInt(100_000, 999_999);
        useradd("-o", "-u", "0", alias);
        assertThat(new AccountSwitch(true, null, null, false, 0).plan(launch(alias)))
                .isInstanceOfSatisfying(AccountSwitch.Plan.Refuse.class, r -> assertThat(r.reason()).contains("never run as root").contains("uid 0"));
        assertThat(new AccountSwitch(true, null, null, true, 0).plan(launch(alias))).isInstanceOf(AccountSwitch.Plan.Switch.class);
    }

    @Test
    void an_agent_that_is_not_root_runs_every_job_as_itself_and_says_why() {
        AccountSwitch s = new AccountSwitch(false, null, "nobody", false, 0);
        assertThat(s.switchesAccounts()).isFalse();
        assertThat(s.whyNot()).contains("not root");
        assertThat(s.plan(launch("alice"))).isInstanceOf(AccountSwitch.Plan.AsAgent.class);
        String noSetpriv = new ShellWrapper(null, "test").cannotSwitchReason();
        assertThat(noSetpriv).contains("setpriv");
        AccountSwitch withoutSetpriv = new AccountSwitch(true, noSetpriv, "nobody", false, 0);
        assertThat(withoutSetpriv.switchesAccounts()).isFalse();
        assertThat(withoutSetpriv.whyNot()).isEqualTo(noSetpriv + ": every job runs as the agent's own account");
        assertThat(withoutSetpriv.plan(launch("alice"))).isInstanceOf(AccountSwitch.Plan.AsAgent.class);
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
