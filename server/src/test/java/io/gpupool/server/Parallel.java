package io.gpupool.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** Test helper: a check run on every item of a list by a few clients at once (the crash tests check thousands of jobs). */
final class Parallel {
    private Parallel() {}

    interface Check<T> {
        void run(T item) throws Exception;
    }

    /** Runs {@code check} on every item from {@code clients} virtual threads; the first failure is thrown. */
    static <T> void each(List<T> items, int clients, Check<T> check) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        Queue<Throwable> failed = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            threads.add(Thread.startVirtualThread(() -> {
                int k;
                while (failed.isEmpty() && (k = next.getAndIncrement()) < items.size()) {
                    try {
                        check.run(items.get(k));
                    } catch (Throwable t) {
                        failed.add(t);
                    }
                }
            }));
        }
        for (Thread t : threads) t.join();
        Throwable first = failed.peek();
        if (first instanceof Error e) throw e;
        if (first != null) throw new AssertionError(first.getMessage(), first);
    }
}
