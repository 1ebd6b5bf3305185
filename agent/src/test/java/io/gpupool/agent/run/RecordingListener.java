package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Collects what a {@link JobRunner} reports, for assertions. */
final class RecordingListener implements JobRunner.Listener {

    record Event(String kind, JobKey key, JobEnd end, String message) {}

    final List<Event> events = new CopyOnWriteArrayList<>();

    @Override
    public void started(RunningJob job) {
        events.add(new Event("started", job.key(), null, null));
    }

    @Override
    public void ended(JobLaunch launch, JobEnd end) {
        events.add(new Event("ended", launch.key(), end, end.message()));
    }

    @Override
    public void warning(RunningJob job, String message) {
        events.add(new Event("warning", job.key(), null, message));
    }

    List<Event> of(String kind) {
        return events.stream().filter(e -> e.kind().equals(kind)).toList();
    }

    JobEnd endOf(JobKey key) {
        return events.stream().filter(e -> e.kind().equals("ended") && e.key().equals(key)).map(Event::end).findFirst().orElse(null);
    }
}
