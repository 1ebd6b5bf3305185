package io.gpupool.agent.node;

import io.gpupool.agent.link.LinkException;
import io.gpupool.agent.link.ServerLink;
import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.agent.protocol.LogStream;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.protocol.Registration;
import io.gpupool.agent.protocol.ReportResponse;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The server side of the agent protocol, in memory, following docs/architecture.md: each status seq is
 * taken once, logs are appended by offset, the desired state carries a version. It can be cut off (no
 * answer) or lose exactly one answer after processing the request, to test the agent's retry paths.
 */
final class InMemoryServerLink implements ServerLink {

    final List<RegisterRequest> registrations = new ArrayList<>();
    final List<JobStatusReport> statuses = new ArrayList<>();
    final List<NodeReport> reports = new ArrayList<>();
    final Map<String, ByteArrayOutputStream> logs = new LinkedHashMap<>();
    long highestSeq = -1;
    boolean reachable = true;
    boolean loseNextAnswer;
    /** The next report is answered "unknown node", as after the node was removed from the server. */
    boolean forgetNode;
    String epoch = "epoch-1";
    long reportIntervalMs = 0;
    long nodeLostTimeoutMs = 0;
    /** The node's lease epoch: a report under an older one is answered but not applied (the node was declared lost). */
    long leaseEpoch = 0;
    /** Acknowledge output without the submit instant, as a server of the release before it does. */
    boolean acksWithoutInstant;
    /** How long each answer takes to arrive after the request was sent (a slow network). */
    long answerDelayMs = 0;
    private DesiredState desired = new DesiredState(0, List.of());
    private boolean sendDesired = true;

    synchronized void want(long version, List<JobLaunch> jobs) {
        desired = new DesiredState(version, jobs);
        sendDesired = true;
    }

    /** Sends this exact message next, as a late or repeated delivery would. */
    synchronized void deliver(DesiredState state) {
        desired = state;
        sendDesired = true;
    }

    @Override
    public synchronized Registration register(RegisterRequest request) throws LinkException {
        if (!reachable) throw new LinkException(LinkException.Kind.UNREACHABLE, "connection refused");
        registrations.add(request);
        sendDesired = true;
        return new Registration("node-" + request.nodeName(), epoch, reportIntervalMs, nodeLostTimeoutMs, null, leaseEpoch);
    }

    @Override
    public synchronized ReportResponse report(NodeReport report) throws LinkException {
        if (!reachable) throw new LinkException(LinkException.Kind.UNREACHABLE, "connection refused");
        if (forgetNode) {
            forgetNode = false;
            throw new LinkException(LinkException.Kind.UNKNOWN_NODE, "unknown node " + report.nodeId());
        }
        delay();
        if (report.leaseEpoch() < leaseEpoch) {
            // sent before the agent heard that its node was declared lost: nothing applied
            sendDesired = false;
            return new ReportResponse(highestSeq, desired, List.of(), leaseEpoch, nodeLostTimeoutMs);
        }
        reports.add(report);
        for (JobStatusReport s : report.statuses()) {
            if (s.seq() > highestSeq) { // each seq once
                statuses.add(s);
                highestSeq = s.seq();
            }
        }
        List<LogOffset> acks = new ArrayList<>();
        for (LogChunk c : report.logs()) {
            ByteArrayOutputStream held = logs.computeIfAbsent(key(c.jobId(), c.attempt(), c.submittedMs(), c.stream()), k -> new ByteArrayOutputStream());
            if (c.offset() == held.size()) held.writeBytes(c.data());
            else if (c.offset() + c.data().length > held.size() && c.offset() < held.size()) {
                held.write(c.data(), (int) (held.size() - c.offset()), (int) (c.offset() + c.data().length - held.size()));
            }
            acks.add(new LogOffset(c.jobId(), c.attempt(), c.stream(), held.size(), acksWithoutInstant ? null : c.submittedMs()));
        }
        ReportResponse answer = new ReportResponse(highestSeq, sendDesired || report.appliedDesiredVersion() < desired.version() ? desired : null,
                acks, leaseEpoch, nodeLostTimeoutMs);
        sendDesired = false;
        if (loseNextAnswer) {
            loseNextAnswer = false;
            sendDesired = true;
            throw new LinkException(LinkException.Kind.UNREACHABLE, "read timed out");
        }
        return answer;
    }

    private void delay() {
        if (answerDelayMs <= 0) return;
        try {
            Thread.sleep(answerDelayMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    synchronized String log(String jobId, int attempt, LogStream stream) {
        return log(jobId, attempt, null, stream);
    }

    /** The output held of the attempt of the job submitted at {@code submittedMs} (null: of a launch that named none). */
    synchronized String log(String jobId, int attempt, Long submittedMs, LogStream stream) {
        ByteArrayOutputStream b = logs.get(key(jobId, attempt, submittedMs, stream));
        return b == null ? "" : b.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    synchronized List<JobStatusReport> statusesOf(String jobId) {
        return statuses.stream().filter(s -> s.jobId().equals(jobId)).toList();
    }

    synchronized List<JobStatusReport> statuses() {
        return List.copyOf(statuses);
    }

    private static String key(String jobId, int attempt, Long submittedMs, LogStream stream) {
        return jobId + "#" + attempt + "@" + submittedMs + "/" + stream;
    }
}
