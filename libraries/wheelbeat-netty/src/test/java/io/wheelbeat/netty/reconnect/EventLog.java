package io.wheelbeat.netty.reconnect;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Records a client's events with the {@link System#nanoTime()} of their arrival. */
final class EventLog implements ReconnectListener {

    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(20);

    record Entry(long nanos, ReconnectEvent event) {}

    private final List<Entry> entries = new ArrayList<>();

    @Override
    public synchronized void onEvent(ReconnectEvent event) {
        entries.add(new Entry(System.nanoTime(), event));
        notifyAll();
    }

    /** Waits (generously) for the {@code n}-th event of {@code type} and returns its entry. */
    synchronized Entry await(Class<? extends ReconnectEvent> type, int n) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (true) {
            List<Entry> matching = entries(type);
            if (matching.size() >= n) {
                return matching.get(n - 1);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                fail("no " + type.getSimpleName() + " #" + n + " within 20 s; events: " + entries);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Returns the events of {@code type} so far, in order. */
    @SuppressWarnings("unchecked")
    synchronized <T extends ReconnectEvent> List<T> events(Class<T> type) {
        List<T> out = new ArrayList<>();
        for (Entry e : entries(type)) {
            out.add((T) e.event());
        }
        return out;
    }

    /** Returns the entries of {@code type} so far, in order. */
    synchronized List<Entry> entries(Class<? extends ReconnectEvent> type) {
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries) {
            if (type.isInstance(e.event())) {
                out.add(e);
            }
        }
        return out;
    }

    /** Returns every entry so far, in order. */
    synchronized List<Entry> all() {
        return new ArrayList<>(entries);
    }
}
