package io.gpupool.server.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/** Utilization and queue length over the last 30 minutes, one point every 2 seconds (for the dashboard's charts). */
public final class PoolHistory {
    public static final long STEP_MS = 2000;
    public static final int POINTS = 900;

    /** @param utilization mean reported GPU utilization (0..1), null without telemetry */
    public record Point(long atMs, double allocation, Double utilization, int pending, int running) {}

    private final ArrayDeque<Point> points = new ArrayDeque<>();

    synchronized void sample(PoolSnapshot s) {
        Point last = points.peekLast();
        if (last != null && s.atMs() - last.atMs() < STEP_MS) return;
        points.addLast(new Point(s.atMs(), s.totals().allocation(), s.totals().utilization(), s.pendingCount(), s.runningCount()));
        while (points.size() > POINTS) points.removeFirst();
    }

    public synchronized List<Point> points() {
        return new ArrayList<>(points);
    }
}
