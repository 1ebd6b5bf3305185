package io.gpupool.store;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The lease and the fencing token on PostgreSQL (high availability): one holder at a time, a takeover as soon as the
 * holder's session is gone or its lease has run out on the database's clock, and no commit of a replaced holder, an
 * empty one included.
 */
class ServiceLeaseTest {
    private static final long TTL_MS = 1500;
    private final List<AutoCloseable> open = new ArrayList<>();
    private String url;

    @BeforeEach
    void database() {
        url = TestDatabases.freshPostgresUrl();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open.reversed()) c.close();
    }

    private Database db() {
        Database d = Database.open(url);
        open.add(d);
        return d;
    }

    private ServiceLease lease(Database d, String holder) {
        ServiceLease l = new ServiceLease(d, holder, "http://" + holder + ":8080", TTL_MS);
        open.add(l);
        return l;
    }

    @Test
    void one_holder_at_a_time_and_a_gone_holder_is_replaced_at_once() {
        ServiceLease a = lease(db(), "a");
        ServiceLease b = lease(db(), "b");
        assertThat(a.tryAcquire()).isEqualTo(OptionalLong.of(1));
        assertThat(b.tryAcquire()).as("a holds the lease and its session lives").isEmpty();
        assertThat(b.read().url()).isEqualTo("http://a:8080");
        assertThat(a.renew(1)).isTrue();   // the lease now runs TTL_MS more
        long t0 = System.nanoTime();
        a.close();   // as a kill -9 does: the session ends (its backend exits a moment later), its advisory lock with it
        OptionalLong won = OptionalLong.empty();
        while (won.isEmpty() && System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(TTL_MS)) won = b.tryAcquire();
        assertThat(won).isEqualTo(OptionalLong.of(2));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("the holder's session is gone: no wait for the lease to run out")
                .isLessThan(TTL_MS / 2);
        assertThat(b.read().remainingMs()).isPositive();
    }

    @Test
    void a_silent_holder_loses_the_lease_when_it_runs_out_and_its_renewal_then_fails() {
        ServiceLease a = lease(db(), "a");
        ServiceLease b = lease(db(), "b");
        assertThat(a.tryAcquire()).isEqualTo(OptionalLong.of(1));
        // a is paused: it neither renews nor ends its session
        assertThat(b.tryAcquire()).isEmpty();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TTL_MS + 3000);
        OptionalLong won = OptionalLong.empty();
        while (won.isEmpty() && System.nanoTime() < deadline) won = b.tryAcquire();
        assertThat(won).as("taken over once the lease ran out").isEqualTo(OptionalLong.of(2));
        assertThat(a.renew(1)).as("the old holder's renewal finds the epoch moved on").isFalse();
        assertThat(b.renew(2)).isTrue();
    }

    @Test
    void a_replaced_holders_writer_commits_nothing_more_and_steps_down() throws Exception {
        Database da = db();
        ServiceLease a = lease(da, "a");
        ServiceLease b = lease(db(), "b");
        assertThat(a.tryAcquire()).isEqualTo(OptionalLong.of(1));
        AtomicInteger steppedDown = new AtomicInteger();
        GroupCommitWriter writer = new GroupCommitWriter(da, new WriteFence(1, steppedDown::incrementAndGet));
        open.add(writer);
        writer.submit(new Write.PutTenant(new TenantRow("before", 1, 0, 0, 1))).get(10, TimeUnit.SECONDS);
        writer.submit(List.of()).get(10, TimeUnit.SECONDS);   // an empty batch passes the check while the epoch is its own
        a.close();
        OptionalLong won = OptionalLong.empty();
        while (won.isEmpty()) won = b.tryAcquire();   // at once, or when the lease runs out: either way before the test's timeout
        assertThat(won).isEqualTo(OptionalLong.of(2));

        CompletableFuture<Void> late = writer.submit(new Write.PutTenant(new TenantRow("late", 1, 0, 0, 2)));
        assertThatThrownBy(() -> late.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(WriteFence.Fenced.class);
        assertThat(steppedDown.get()).isEqualTo(1);
        assertThat(writer.fenced()).isTrue();
        assertThat(writer.healthy()).isFalse();
        assertThatThrownBy(() -> writer.submit(List.of()).get(10, TimeUnit.SECONDS)).as("an empty batch (an answer's wait) too")
                .hasCauseInstanceOf(WriteFence.Fenced.class);
        Store reader = new Store(db());
        assertThat(reader.recover().tenants()).extracting(TenantRow::name).containsExactly("before");
    }

    @Test
    void a_rehearsals_refused_commit_is_no_error_in_the_log() throws Exception {
        Database d = db();
        assertThat(lease(d, "a").tryAcquire()).isEqualTo(OptionalLong.of(1));
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(log, true));
        try {
            GroupCommitWriter writer = new GroupCommitWriter(d, WriteFence.rehearsal());
            open.add(writer);
            CompletableFuture<Void> w = writer.submit(new Write.PutTenant(new TenantRow("rehearsed", 1, 0, 0, 1)));
            assertThatThrownBy(() -> w.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(WriteFence.Fenced.class);
        } finally {
            System.setErr(err);
        }
        // a standby rehearses every 10 s: an ERROR line each time was noise in the operator's journal
        assertThat(log.toString()).doesNotContain("ERROR").doesNotContain("its writes are refused");
        assertThat(new Store(db()).recover().tenants()).extracting(TenantRow::name).doesNotContain("rehearsed");
    }
}
