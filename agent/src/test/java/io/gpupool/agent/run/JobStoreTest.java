package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attempt directories as the at-most-once gate, with jobs that share an id: a store restored from a backup gives
 * out again the ids of jobs submitted after the backup, each with its own submit instant.
 */
class JobStoreTest {

    @TempDir
    Path work;

    private static JobLaunch launch(String id, int attempt, Long submittedMs) {
        return new JobLaunch(id, attempt, List.of("true"), Map.of(), null, List.of()).withSubmittedMs(submittedMs);
    }

    @Test
    void aDirectoryIsNamedByIdAttemptAndSubmitInstantAndAnOlderAgentsNameHasNoInstant() {
        assertThat(JobStore.dirName(new JobKey("j57", 1, 1733150000000L))).isEqualTo("j57.1@1733150000000");
        assertThat(JobStore.dirName(new JobKey("j57", 1))).isEqualTo("j57.1");
        // '@' in an id is replaced (and the id hashed), so the instant's part is never an id's
        assertThat(JobStore.dirName(new JobKey("a@5", 1, 7L))).matches("a_5-[0-9a-f]{12}\\.1@7");
        assertThat(JobStore.dirName(new JobKey("a.1", 2))).isNotEqualTo(JobStore.dirName(new JobKey("a", 1, 2L)));
    }

    @Test
    void theSameJobsAttemptIsRefusedAndAnotherJobWithItsIdAndAttemptGetsADirectoryOfItsOwn() throws Exception {
        JobStore store = new JobStore(work);
        assertThat(store.create(launch("j57", 1, 1000L))).isPresent();
        assertThat(store.create(launch("j57", 1, 1000L))).as("the same job's attempt: never again").isEmpty();
        assertThat(store.started(new JobKey("j57", 1, 1000L))).isTrue();
        assertThat(store.started(new JobKey("j57", 1, 2000L))).as("another job with that id and attempt").isFalse();
        assertThat(store.started(new JobKey("j57", 1))).as("a launch that does not name its job: any job's directory counts").isTrue();
        assertThat(store.started(new JobKey("j57", 2, 1000L))).isFalse();

        assertThat(store.create(launch("j57", 1, 2000L))).isPresent();
        assertThat(work.resolve("jobs")).isDirectoryContaining(p -> p.getFileName().toString().equals("j57.1@1000"))
                .isDirectoryContaining(p -> p.getFileName().toString().equals("j57.1@2000"));
        assertThat(store.find(new JobKey("j57", 1, 2000L)).orElseThrow().launch().submittedMs()).isEqualTo(2000L);

        JobStore reopened = new JobStore(work); // a restarted agent reads the directories back
        assertThat(reopened.started(new JobKey("j57", 1, 1000L))).isTrue();
        assertThat(reopened.started(new JobKey("j57", 1, 2000L))).isTrue();
        assertThat(reopened.started(new JobKey("j57", 1, 3000L))).isFalse();
        assertThat(reopened.create(launch("j57", 1, 2000L))).isEmpty();
        reopened.delete(new JobKey("j57", 1, 2000L));
        assertThat(reopened.started(new JobKey("j57", 1, 2000L))).isFalse();
        assertThat(reopened.started(new JobKey("j57", 1))).as("j57.1@1000 is still there").isTrue();
    }

    @Test
    void anOlderAgentsDirectoryBlocksEveryJobOfItsIdAndAttempt() throws Exception {
        // as an agent of the release before left it: no instant in the name or in launch.json
        Path old = Files.createDirectories(work.resolve("jobs/j9.1"));
        Files.writeString(old.resolve("launch.json"), """
                {"job_id":"j9","attempt":1,"command":["true"],"env":{},"work_dir":null,"gpus":[],"run_as":null}""");
        JobStore store = new JobStore(work);
        assertThat(store.find(new JobKey("j9", 1)).orElseThrow().launch().key()).isEqualTo(new JobKey("j9", 1));
        assertThat(store.started(new JobKey("j9", 1, 5000L))).isTrue();
        assertThat(store.create(launch("j9", 1, 5000L))).as("it may be this job's attempt: never started").isEmpty();
        assertThat(work.resolve("jobs/j9.1@5000")).doesNotExist();
        assertThat(store.create(launch("j9", 2, 5000L))).isPresent();
    }
}
