package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

class LogReaderTest {

    @TempDir
    Path dir;

    @Test
    void readsFromAnOffsetInChunks() throws Exception {
        Path f = dir.resolve("stdout.log");
        Files.writeString(f, "0123456789");
        LogReader.Chunk c = LogReader.read(f, 3, 4);
        assertThat(new String(c.data(), StandardCharsets.UTF_8)).isEqualTo("3456");
        assertThat(c.nextOffset()).isEqualTo(7);
        assertThat(c.atEnd()).isFalse();
        assertThat(LogReader.read(f, 7, 100).atEnd()).isTrue();
        assertThat(LogReader.read(dir.resolve("missing.log"), 0, 10).data()).isEmpty();
    }

    @Test
    void followReadsARunningJobsOutputUntilItEnds() throws Exception {
        RecordingListener events = new RecordingListener();
        try (JobRunner runner = new JobRunner(RunnerConfig.defaults(dir), List.of(), events)) {
            RunningJob job = Jobs.started(runner.start(new JobLaunch("talk", 0,
                    List.of("sh", "-c", "for i in 1 2 3 4 5; do echo line $i; sleep 0.05; done"), Map.of(), null, List.of())));
            ByteArrayOutputStream seen = new ByteArrayOutputStream();
            AtomicBoolean over = new AtomicBoolean();
            job.end().thenRun(() -> over.set(true));
            long end = LogReader.follow(job.directory().stdout(), 0, over::get, c -> seen.writeBytes(c.data()), Duration.ofMillis(20));
            assertThat(seen.toString(StandardCharsets.UTF_8)).isEqualTo("line 1\nline 2\nline 3\nline 4\nline 5\n");
            assertThat(end).isEqualTo(35);
        }
    }

    @Test
    void endedJobDirectoriesArePrunedAfterTheRetentionUnlessKept() throws Exception {
        try (JobRunner runner = new JobRunner(RunnerConfig.defaults(dir), List.of(), new RecordingListener())) {
            for (String id : List.of("old", "kept", "recent")) Jobs.await(Jobs.started(runner.start(Jobs.sh(id, "true"))));
            RunningJob running = Jobs.started(runner.start(Jobs.sh("running", "sleep 30")));
            for (String id : List.of("old", "kept")) {
                Path outcome = runner.store().find(new JobKey(id, 0)).orElseThrow().path().resolve(JobDirectory.OUTCOME);
                Files.setLastModifiedTime(outcome, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 8 * 86_400_000L));
            }
            int deleted = runner.store().pruneEnded(Duration.ofDays(7), k -> k.jobId().equals("kept"));
            assertThat(deleted).isEqualTo(1);
            assertThat(runner.store().started(new JobKey("old", 0))).isFalse();
            assertThat(runner.store().started(new JobKey("kept", 0))).isTrue();
            assertThat(runner.store().started(new JobKey("recent", 0))).isTrue();
            assertThat(runner.store().started(running.key())).isTrue();
            runner.stopAll("test over", Duration.ofSeconds(5));
        }
    }

    @Test
    void jobDirectoryNamesAreSafeAndDistinct() {
        assertThat(JobStore.dirName(new JobKey("train-7", 2))).isEqualTo("train-7.2");
        String a = JobStore.dirName(new JobKey("../etc/passwd", 0));
        String b = JobStore.dirName(new JobKey("__etc_passwd", 0));
        assertThat(a).doesNotContain("/").startsWith(".._etc_passwd-").endsWith(".0");
        assertThat(a).isNotEqualTo(b);
        assertThat(JobStore.dirName(new JobKey("..", 0))).startsWith("..-").endsWith(".0");
    }
}
