package io.wheelbeat.demo.client;

import io.wheelbeat.netty.reconnect.ReconnectEvent;
import io.wheelbeat.netty.reconnect.ReconnectListener;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the client has seen, across all its connections: connection state from the reconnect
 * events, and heartbeat round-trip times in an HdrHistogram recorder (one interval per status
 * line, plus the whole run for the summary).
 *
 * <p>Thread-safe: event loops record, the main thread reads.
 */
final class ClientStats implements ReconnectListener {

    private static final long MAX_RTT_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final int connections;
    private final AtomicInteger connected = new AtomicInteger();
    private final LongAdder attempts = new LongAdder();
    private final LongAdder connects = new LongAdder();
    private final LongAdder disconnects = new LongAdder();
    private final LongAdder goodbyes = new LongAdder();
    private final LongAdder echoes = new LongAdder();
    private final Recorder rtt = new Recorder(MAX_RTT_NANOS, 3);
    private final Histogram wholeRun = new Histogram(MAX_RTT_NANOS, 3);
    private Histogram interval;

    ClientStats(int connections) {
        this.connections = connections;
    }

    @Override
    public void onEvent(ReconnectEvent event) {
        if (event instanceof ReconnectEvent.Connecting) {
            attempts.increment();
        } else if (event instanceof ReconnectEvent.Connected) {
            connects.increment();
            connected.incrementAndGet();
        } else if (event instanceof ReconnectEvent.Disconnected) {
            disconnects.increment();
            connected.decrementAndGet();
        }
    }

    void recordRoundTrip(long nanos) {
        rtt.recordValue(Math.min(nanos, MAX_RTT_NANOS));
    }

    void recordGoodbye() {
        goodbyes.increment();
    }

    void recordEcho() {
        echoes.increment();
    }

    /** One status line; starts a new round-trip interval. Main thread only. */
    synchronized String statusLine() {
        interval = rtt.getIntervalHistogram(interval);
        wholeRun.add(interval);
        int up = connected.get();
        return String.format(
                "connected %d/%d, reconnecting %d, attempts %d, pongs %d (rtt %s), goodbyes %d, echoes %d",
                up,
                connections,
                connections - up,
                attempts.sum(),
                interval.getTotalCount(),
                percentiles(interval),
                goodbyes.sum(),
                echoes.sum());
    }

    /** The summary of the whole run. Main thread only. */
    synchronized String summary() {
        interval = rtt.getIntervalHistogram(interval);
        wholeRun.add(interval);
        return String.format(
                "summary: %d connections, %d connects, %d disconnects, %d attempts, %d pongs "
                        + "(rtt %s), %d goodbyes, %d echoes",
                connections,
                connects.sum(),
                disconnects.sum(),
                attempts.sum(),
                wholeRun.getTotalCount(),
                percentiles(wholeRun),
                goodbyes.sum(),
                echoes.sum());
    }

    private static String percentiles(Histogram histogram) {
        if (histogram.getTotalCount() == 0) {
            return "none";
        }
        return String.format(
                "p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                histogram.getValueAtPercentile(50) / 1e6,
                histogram.getValueAtPercentile(99) / 1e6,
                histogram.getMaxValue() / 1e6);
    }
}
