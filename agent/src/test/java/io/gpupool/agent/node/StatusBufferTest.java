package io.gpupool.agent.node;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.assertj.core.api.Assertions.assertThat;

class StatusBufferTest {

    @TempDir
    Path work;

    @Test
    void unacknowledgedReportsAndTheSequenceSurviveARestart() throws Exception {
        StatusBuffer b = new StatusBuffer(work);
        JobKey k = new JobKey("j", 0);
        b.add(k, JobPhase.RUNNING, null, 10L, 1L, null, "started");
        b.add(k, JobPhase.SUCCEEDED, 0, null, 1L, 2L, "exit code 0");
        b.add(new JobKey("k", 3), JobPhase.RUNNING, null, 11L, 3L, null, "started");
        b.acknowledge(0);
        // A crash in the middle of appending leaves half a line: it is skipped.
        Files.writeString(work.resolve("status-journal.jsonl"), "{\"seq\":3,\"job_", StandardOpenOption.APPEND);

        StatusBuffer again = new StatusBuffer(work);
        assertThat(again.pending(10)).extracting(JobStatusReport::seq).containsExactly(1L, 2L);
        assertThat(again.pending(1)).extracting(JobStatusReport::seq).containsExactly(1L);
        assertThat(again.nextSeq()).isEqualTo(3);
        again.acknowledge(2);
        assertThat(again.size()).isZero();
        assertThat(Files.size(work.resolve("status-journal.jsonl"))).as("emptied once all is acknowledged").isZero();
        assertThat(new StatusBuffer(work).nextSeq()).as("numbers are never reused").isEqualTo(3);
    }
}
