package io.wheelbeat.loadtest;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * What one arm's server saw of each of its connections (indices {@code first} to {@code end},
 * end excluded), by connection index: when its last message arrived
 * and when its first reader-idle event fired, both as readings of the event loops' ticker.
 * From these and the {@link SilencePlan} it decides, per connection, whether the idle handler
 * was right.
 *
 * <p>Allocated for all connections before the run's baseline heap reading, so its 16 bytes per
 * connection are not counted against the connections.
 *
 * <p>Thread rules: entry {@code i} is written only by the event loop of connection {@code i}'s
 * server channel. {@link #evaluate} must run after something that makes those writes visible
 * (the load test first reads every loop's counters on the loop itself).
 */
final class ConnectionLedger {

    /** Marks "never": the ticker starts near zero, so a real reading is stored as at least 1. */
    private static final long NEVER = 0;

    private final int first;
    private final long[] lastArrival;
    private final long[] firstIdle;
    private final AtomicLong unidentifiedIdleEvents = new AtomicLong();
    private final AtomicLong badHellos = new AtomicLong();

    ConnectionLedger(int connections) {
        this(0, connections);
    }

    /** The ledger of connections {@code first} (included) to {@code end} (excluded). */
    ConnectionLedger(int first, int end) {
        this.first = first;
        this.lastArrival = new long[end - first];
        this.firstIdle = new long[end - first];
    }

    /** Whether connection {@code index} is one of this ledger's. */
    boolean covers(int index) {
        return index >= first && index - first < lastArrival.length;
    }

    /** A message of connection {@code index} reached the server pipeline at {@code nowNanos}. */
    void arrived(int index, long nowNanos) {
        lastArrival[index - first] = Math.max(1, nowNanos);
    }

    /** Whether a message of connection {@code index} has reached the server. */
    boolean heard(int index) {
        return lastArrival[index - first] != NEVER;
    }

    /** The idle handler reported connection {@code index} reader-idle at {@code nowNanos}. */
    void idle(int index, long nowNanos) {
        if (firstIdle[index - first] == NEVER) {
            firstIdle[index - first] = Math.max(1, nowNanos);
        }
    }

    /** An idle event fired on a channel that never said which connection it is. */
    void unidentifiedIdle() {
        unidentifiedIdleEvents.incrementAndGet();
    }

    /** A channel announced an index outside the run. */
    void badHello() {
        badHellos.incrementAndGet();
    }

    /**
     * The latest idle deadline among the connections {@code plan} silences: their last arrival
     * plus {@code readerIdleNanos}. {@code Long.MIN_VALUE} if none has been heard.
     */
    long latestSilentDeadline(SilencePlan plan, long readerIdleNanos) {
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < lastArrival.length; i++) {
            if (plan.isSilent(first + i) && lastArrival[i] != NEVER) {
                latest = Math.max(latest, lastArrival[i] + readerIdleNanos);
            }
        }
        return latest;
    }

    /**
     * Whether every connection {@code plan} silences that was heard has had its first idle event:
     * then waiting longer changes no silenced connection's verdict.
     */
    boolean everySilentReported(SilencePlan plan) {
        for (int i = 0; i < lastArrival.length; i++) {
            if (plan.isSilent(first + i) && lastArrival[i] != NEVER && firstIdle[i] == NEVER) {
                return false;
            }
        }
        return true;
    }

    /**
     * How late the silenced connections were reported, by the second (since {@code originNanos})
     * their idle event fired in. Call after {@link #evaluate}'s visibility condition holds.
     */
    List<RunResult.LateSecond> latenessOverTime(SilencePlan plan, long readerIdleNanos, long originNanos) {
        java.util.TreeMap<Integer, Histogram> bySecond = new java.util.TreeMap<>();
        for (int i = 0; i < lastArrival.length; i++) {
            if (!plan.isSilent(first + i) || lastArrival[i] == NEVER || firstIdle[i] == NEVER) {
                continue;
            }
            long late = firstIdle[i] - (lastArrival[i] + readerIdleNanos);
            if (late >= 0) {
                bySecond.computeIfAbsent(
                                (int) ((firstIdle[i] - originNanos) / 1_000_000_000L),
                                s -> new Histogram(TimeUnit.HOURS.toNanos(1), 2))
                        .recordValue(Math.min(late, TimeUnit.HOURS.toNanos(1)));
            }
        }
        List<RunResult.LateSecond> seconds = new java.util.ArrayList<>();
        bySecond.forEach((second, h) -> seconds.add(new RunResult.LateSecond(
                second, (int) h.getTotalCount(), h.getValueAtPercentile(50) / 1e6, h.getMaxValue() / 1e6)));
        return seconds;
    }

    /**
     * Judges every idle event against the truth. A connection's true deadline is its last
     * arrival at the server plus {@code readerIdleNanos}. An idle event before it, or on a
     * connection the plan kept talking, is false; a silenced connection with no idle event by
     * deadline plus {@code toleranceNanos} is missed. Lateness (fire time minus true deadline)
     * is recorded for every silenced connection that was reported at or after its deadline.
     */
    IdleVerdict evaluate(SilencePlan plan, long readerIdleNanos, long toleranceNanos) {
        Histogram lateness = new Histogram(TimeUnit.HOURS.toNanos(1), 3);
        int plannedSilent = 0;
        int neverHeard = 0;
        int onTime = 0;
        int missedNotReported = 0;
        int missedLate = 0;
        int falsePremature = 0;
        int falseWhileTalking = 0;
        for (int i = 0; i < lastArrival.length; i++) {
            boolean silent = plan.isSilent(first + i);
            if (silent) {
                plannedSilent++;
            }
            if (lastArrival[i] == NEVER) {
                neverHeard++;
                continue;
            }
            long deadline = lastArrival[i] + readerIdleNanos;
            long fired = firstIdle[i];
            if (fired == NEVER) {
                if (silent) {
                    missedNotReported++;
                }
            } else if (fired < deadline) {
                falsePremature++;
            } else if (!silent) {
                falseWhileTalking++;
            } else {
                long late = fired - deadline;
                lateness.recordValue(Math.min(late, lateness.getHighestTrackableValue()));
                if (late > toleranceNanos) {
                    missedLate++;
                } else {
                    onTime++;
                }
            }
        }
        return new IdleVerdict(
                plannedSilent,
                neverHeard,
                onTime,
                missedNotReported,
                missedLate,
                falsePremature,
                falseWhileTalking,
                unidentifiedIdleEvents.get(),
                badHellos.get(),
                lateness);
    }
}
