package io.wheelbeat.loadtest;

import java.util.List;
import java.util.Map;

/**
 * Everything one arm of one round measured: its server, its share of the connections, beside
 * the other arms in the same JVM. Written as JSON by the round's JVM and read back by the
 * session that started it. Times are in the units their names say. Heap, GC and process CPU
 * belong to the whole JVM, the same for every arm of a round, except where a field says
 * otherwise.
 *
 * @param tier {@code local} or {@code tcp}
 * @param transport {@code local}, {@code epoll} or {@code nio}
 * @param connectionKind what one connection is in this tier, in words
 * @param handler the arm: {@code wheel}, {@code netty} or {@code none}, or with two event loops
 *     compared {@code wheel-loop} or {@code netty-loop}
 * @param round which round of the session, from 1 (see {@code --repeat})
 * @param connectionsRequested the round's connections over all arms (the arm's share is
 *     {@code steady.connections})
 * @param opened connects that succeeded
 * @param failed connects that failed
 * @param serverChannels channels the server saw become active
 * @param opened the arm's connects that succeeded
 * @param failed the arm's connects that failed
 * @param rampSeconds the arm's share of the ramp, heap readings excluded
 * @param openRatePerSecond opened / rampSeconds
 * @param windowSeconds the round: first connect to the end of idle detection
 * @param steady the steady window: the arm's server loops between ramp and silence
 * @param loopLag how late a task handed to the arm's loops ran, over the round
 * @param timeline the progress samples, every few seconds from the start of the round
 */
record RunResult(
        String tier,
        String transport,
        String connectionKind,
        String handler,
        int round,
        int connectionsRequested,
        int opened,
        int failed,
        long serverChannels,
        double rampSeconds,
        double openRatePerSecond,
        double windowSeconds,
        Heap heap,
        Timers timers,
        Idle idle,
        Traffic traffic,
        Gc gc,
        Cpu cpu,
        Machine machine,
        Steady steady,
        LoopLag loopLag,
        List<Sample> timeline) {

    /** This result as the {@code round}-th repeat of its session. */
    RunResult inRound(int round) {
        return new RunResult(
                tier,
                transport,
                connectionKind,
                handler,
                round,
                connectionsRequested,
                opened,
                failed,
                serverChannels,
                rampSeconds,
                openRatePerSecond,
                windowSeconds,
                heap,
                timers,
                idle,
                traffic,
                gc,
                cpu,
                machine,
                steady,
                loopLag,
                timeline);
    }

    /**
     * The steady window: after the ramp and the settle, before the silence, every connection open
     * and heartbeating; split into sub-windows so that arms can be compared window by window.
     *
     * @param connections the arm's connections open in it
     * @param windows the sub-windows, in order
     * @param loopNanosPerMessage the arm's server-loop CPU over the window per message it read
     * @param loopNanosPerConnectionSecond the same CPU per connection and second
     * @param loopBytesPerMessage heap the arm's server loops allocated per message
     * @param attribution what the loops' execution samples attribute to the idle machinery
     */
    record Steady(
            int connections,
            double seconds,
            List<Window> windows,
            double loopNanosPerMessage,
            double loopNanosPerConnectionSecond,
            double loopBytesPerMessage,
            Attribution attribution) {}

    /**
     * One steady sub-window of one arm; every arm's window of the same index covers the same time.
     *
     * @param loopCpuNanos CPU time of the arm's server loop threads (ThreadMXBean)
     * @param messages messages the arm's server read
     * @param loopAllocatedBytes heap the arm's server loops allocated
     */
    record Window(double seconds, long loopCpuNanos, long messages, long loopAllocatedBytes) {}

    /**
     * JFR execution samples of the arm's server loops in the steady window, split by whether the
     * sampled code was the idle machinery (its handler, the loop's scheduler or wheel) or anything
     * else; the idle share of the loops' CPU per message, with its binomial standard error.
     *
     * @param samples execution samples taken on the arm's loops
     * @param idleSamples of them, in idle machinery
     * @param idleNanosPerMessage idle share x loop CPU per message
     * @param idleNanosPerMessageError its standard error from the sampling alone
     * @param topIdleFrames the idle frames seen most often, with their sample counts
     */
    record Attribution(
            long samples,
            long idleSamples,
            double idleShare,
            double idleNanosPerMessage,
            double idleNanosPerMessageError,
            List<String> topIdleFrames) {}

    /**
     * How late the arm's loops ran a task handed to them every {@link LoopLagProbe#PERIOD_MILLIS} ms:
     * the loops' backlog, whatever caused it (their own work, other threads, GC pauses).
     *
     * @param steadyMaxMs the largest lag in the steady window
     * @param maxMs the largest over the round
     * @param maxAtSeconds when it was, since the start of the round
     */
    record LoopLag(double steadyMaxMs, double maxMs, double maxAtSeconds) {}

    /**
     * One progress sample. Rates are over the time since the previous sample.
     *
     * @param atSeconds since the start of the run (the server bound), on the clock of {@link Gc#pauses}
     * @param open connections open
     * @param heapUsedMiB heap in use, garbage included
     * @param loopScheduledTasksPerSecond {@code schedule(...)} calls on the server loops
     * @param reArmsPerSecond read batches that reached the idle handler
     * @param idleEvents idle events fired so far
     * @param expirationsPerSecond timers of the arm's idle machinery that ran out (see {@link Timers})
     * @param maxLoopLagMs the largest loop lag since the previous sample
     * @param pendingTimers timers pending in the arm's idle machinery, where known (-1 if not)
     */
    record Sample(
            double atSeconds,
            int open,
            long heapUsedMiB,
            double loopScheduledTasksPerSecond,
            double reArmsPerSecond,
            double expirationsPerSecond,
            long idleEvents,
            double maxLoopLagMs,
            long pendingTimers) {}

    /**
     * Heap after full collections, this JVM's: in the local tier both ends of every connection,
     * in the TCP tier the server's side only. Read twice at each reading: the heap the collector
     * reports in use, and the bytes of the live objects (a class histogram); the verdict uses
     * the live objects, whose count does not move with the collector's region bookkeeping.
     *
     * @param beforeBytes heap in use before the first connect (server bound, bookkeeping allocated)
     * @param afterBytes heap in use with every connection open and heartbeating
     * @param bytesPerConnection (after - before) / opened, heap in use
     * @param liveBeforeBytes live objects' bytes at the reading of {@code beforeBytes}
     * @param liveAfterBytes live objects' bytes at the reading of {@code afterBytes}
     * @param liveBytesPerConnection (liveAfter - liveBefore) / opened
     * @param liveByClass liveBytesPerConnection by class, the classes that moved by at least
     *     {@link ClassHistogram#SHOWN_BYTES}, largest first
     * @param checkpoints live bytes per connection at points of the ramp, the last after it
     */
    record Heap(
            long beforeBytes,
            long afterBytes,
            double bytesPerConnection,
            long liveBeforeBytes,
            long liveAfterBytes,
            double liveBytesPerConnection,
            Map<String, Double> liveByClass,
            List<HeapPoint> checkpoints) {}

    /** Live objects' bytes per connection, read with {@code connections} open. */
    record HeapPoint(int connections, double bytesPerConnection) {}

    /**
     * Timer operations in the window, and what each number counts for this handler.
     *
     * @param source where the numbers come from
     * @param schedules timers started
     * @param cancels timers stopped before they fired
     * @param reArms read batches that reached the idle handler, each a chance to push a deadline
     *     back: the same count for every handler, whatever each does with it
     * @param expirations timers that ran out (wheel: fired; Netty: its task ran, whether to re-arm
     *     for the time left or to fire an idle event)
     * @param loopScheduledTasks tasks scheduled on the server event loops, all causes
     * @param pendingAtEnd timers pending at the end, where known (-1 if not)
     * @param largestWheelRun the most work one run of a wheel's driving task did in the round
     *     (timers fired plus moved), over the arm's loops; -1 where the arm uses no wheel
     * @param largestWheelRunByLoop the same per server loop, in the group's order
     * @param note how to read these numbers
     */
    record Timers(
            String source,
            long schedules,
            long cancels,
            long reArms,
            long expirations,
            long loopScheduledTasks,
            long pendingAtEnd,
            double schedulesPerSecond,
            double cancelsPerSecond,
            double reArmsPerSecond,
            double expirationsPerSecond,
            double loopScheduledTasksPerSecond,
            int largestWheelRun,
            List<Integer> largestWheelRunByLoop,
            String note) {}

    /**
     * Idle detection against the truth (see {@link IdleVerdict}).
     *
     * @param applicable false for the run without an idle handler
     * @param repeatEvents idle events after the first of an idle period
     * @param overTime lateness by the second the events fired in
     */
    record Idle(
            boolean applicable,
            int plannedSilent,
            int neverHeard,
            int detectedOnTime,
            int missed,
            int missedNotReported,
            int missedLate,
            long falseIdle,
            int falsePremature,
            int falseWhileTalking,
            long unidentified,
            long badHellos,
            long firstEvents,
            long repeatEvents,
            double toleranceMs,
            Lateness lateness,
            List<LateSecond> overTime) {}

    /**
     * The silenced connections reported in one second of the round, by fire time: how late the
     * idle machinery was over time.
     *
     * @param atSecond since the start of the round, on the clock of the samples and GC pauses
     */
    record LateSecond(int atSecond, int reported, double p50Ms, double maxMs) {}

    /**
     * Idle-detection lateness: fire time minus true deadline.
     *
     * @param histogram the HdrHistogram (nanoseconds), compressed and base64-encoded
     */
    record Lateness(
            long count, double p50Ms, double p99Ms, double p999Ms, double maxMs, double meanMs, String histogram) {}

    /**
     * @param messages reads of the server pipeline ({@code channelRead} calls): hellos and
     *     heartbeats, fewer than sent where the transport coalesced buffers queued together
     * @param heartbeatsSent heartbeats the clients sent
     * @param maxSenderLagMs how far behind schedule a heartbeat sender fell at worst
     */
    record Traffic(
            long messages, long readBatches, double messagesPerSecond, long heartbeatsSent, double maxSenderLagMs) {}

    /**
     * Collections during the run, the load test's own heap-reading full GCs apart.
     *
     * @param allocatedBytes heap allocated in the window by every thread of the run's JVM: what
     *     the collector has to clear (does not depend on how busy the machine was)
     * @param serverLoopAllocatedBytes the part of it allocated by the server event loops
     * @param serverLoopBytesPerMessage serverLoopAllocatedBytes per message at the server
     * @param pauses every stop-the-world collection, heap readings included, in order
     */
    record Gc(
            List<String> collectors,
            long collections,
            double totalPauseMs,
            double maxPauseMs,
            long heapReadingCollections,
            double heapReadingPauseMs,
            long allocatedBytes,
            long serverLoopAllocatedBytes,
            double serverLoopBytesPerMessage,
            List<Pause> pauses) {}

    /**
     * One stop-the-world collection.
     *
     * @param atSeconds when it started, since the start of the run
     * @param cause as the JVM gives it, e.g. {@code G1 Evacuation Pause}, {@code G1 Humongous Allocation}
     * @param heapReading whether the load test asked for it (a heap reading)
     */
    record Pause(double atSeconds, double ms, String collector, String cause, boolean heapReading) {}

    /**
     * CPU time in the window.
     *
     * @param processSeconds this JVM, every thread
     * @param serverLoopSeconds the server event loops
     * @param clientSeconds the client event loops (local) or the client process (tcp)
     * @param serverLoopNanosPerMessage server loop CPU per message that reached the server
     */
    record Cpu(
            double processSeconds, double serverLoopSeconds, double clientSeconds, double serverLoopNanosPerMessage) {}

    /**
     * Where it ran.
     *
     * @param loadAverageAtStart the system's 1-minute load average when the run started (-1 where
     *     the system does not tell): above {@code cores}, other work competed for the CPU
     * @param loadAverageAtEnd the same at the end of the run
     */
    record Machine(
            int cores,
            long maxHeapBytes,
            String jvm,
            List<String> jvmArguments,
            long openFileLimit,
            double loadAverageAtStart,
            double loadAverageAtEnd) {}
}
