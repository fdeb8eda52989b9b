package io.wheelbeat.loadtest;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Rejects impossible scenarios before any work starts, each with a message that names the
 * option, the limit and the way out.
 */
final class Preflight {

    /**
     * An estimate of the heap one connection needs with an idle handler: a local pair measured
     * about 3.5 KB live (docs/loadtest.md), plus head-room for the collector.
     */
    static final long HEAP_BYTES_PER_CONNECTION = 5_000;
    /** Heap the run needs besides its connections. */
    static final long HEAP_BYTES_FIXED = 256L << 20;
    /** File descriptors a JVM keeps open besides its sockets (jars, epoll, pipes), generously. */
    static final int FILE_DESCRIPTOR_RESERVE = 200;
    /** The heartbeat sender's calendar works in steps of this; intervals must be longer. */
    static final long MIN_HEARTBEAT_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private Preflight() {}

    /** Thrown for input the load test cannot run; the message says why and what to do. */
    static final class BadInputException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadInputException(String message) {
            super(message);
        }
    }

    /**
     * What this machine allows.
     *
     * @param maxHeapBytes the heap each run's JVM will have
     * @param maxFileDescriptors open-file limit per process, or -1 if unknown
     * @param openFileDescriptors files this process has open now, or -1 if unknown
     */
    record Machine(long maxHeapBytes, long maxFileDescriptors, long openFileDescriptors) {

        /** Reads the limits; the heap is the last {@code -Xmx} of {@code jvmOptions}, else this JVM's. */
        static Machine current(List<String> jvmOptions) {
            long heap = JvmStats.maxHeap();
            for (String option : jvmOptions) {
                if (option.startsWith("-Xmx")) {
                    heap = parseSize(option.substring(4));
                }
            }
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.UnixOperatingSystemMXBean) {
                com.sun.management.UnixOperatingSystemMXBean unix = (com.sun.management.UnixOperatingSystemMXBean) os;
                return new Machine(heap, unix.getMaxFileDescriptorCount(), unix.getOpenFileDescriptorCount());
            }
            return new Machine(heap, -1, -1);
        }

        /** How many TCP connections one process can hold: one socket each, under the open-file limit. */
        int maxTcpConnections() {
            if (maxFileDescriptors < 0) {
                return Integer.MAX_VALUE;
            }
            return (int) Math.max(
                    0,
                    Math.min(
                            Integer.MAX_VALUE,
                            maxFileDescriptors - Math.max(0, openFileDescriptors) - FILE_DESCRIPTOR_RESERVE));
        }
    }

    /** Checks {@code s} against {@code machine}; creates the report directory if it is missing. */
    static void check(Settings s, Machine machine, boolean needReportDir) {
        if (s.handlers().isEmpty()) {
            throw new BadInputException("--idle-handler needs at least one of wheel, netty, none");
        }
        if (new HashSet<>(s.handlers()).size() != s.handlers().size()) {
            throw new BadInputException("--idle-handler lists a handler twice: " + s.handlers());
        }
        if (s.eventLoops().isEmpty()
                || new HashSet<>(s.eventLoops()).size() != s.eventLoops().size()) {
            throw new BadInputException("--event-loop needs netty, wheel, or both once each, got " + s.eventLoops());
        }
        boolean oneAndBaseline = s.handlers().size() == 2 && s.handlers().get(1) == IdleHandlerKind.NONE;
        if (s.comparesLoops()
                && ((s.handlers().size() != 1 && !oneAndBaseline)
                        || !s.handlers().get(0).hasHandler())) {
            throw new BadInputException("--event-loop " + s.eventLoops().get(0) + ","
                    + s.eventLoops().get(1)
                    + " compares the loop groups with one idle handler on both; give one --idle-handler "
                    + "(wheel or netty; the baseline none is added unless --no-baseline), got " + s.handlers());
        }

        for (int size : s.sizes()) {
            checkConnections(s, size, machine);
        }
        positive("--open-rate", s.openRate());
        if (s.openRate() > 10_000_000) {
            throw new BadInputException(
                    "--open-rate " + s.openRate() + " is beyond any machine; at most 10000000 per second");
        }
        atLeast("--max-pending-connects", s.maxPendingConnects(), 1);
        positive("--heartbeat", s.heartbeatNanos());
        if (!(s.jitter() >= 0 && s.jitter() <= 0.9)) {
            throw new BadInputException(
                    "--jitter must be between 0 and 0.9 (a share of the interval), got " + s.jitter());
        }
        if (s.minHeartbeatGapNanos() < MIN_HEARTBEAT_GAP_NANOS) {
            throw new BadInputException("--heartbeat " + DurationConverter.human(s.heartbeatNanos()) + " with --jitter "
                    + s.jitter() + " sends as often as every " + DurationConverter.human(s.minHeartbeatGapNanos())
                    + "; the sender needs at least 50 ms between heartbeats");
        }
        positive("--reader-idle", s.readerIdleNanos());
        if (s.readerIdleNanos() <= s.maxHeartbeatGapNanos()) {
            throw new BadInputException("--reader-idle " + DurationConverter.human(s.readerIdleNanos())
                    + " is not longer than the longest heartbeat gap "
                    + DurationConverter.human(s.maxHeartbeatGapNanos())
                    + " (--heartbeat x (1 + --jitter)): every connection would go idle; raise --reader-idle");
        }
        if (!(s.silentFraction() >= 0 && s.silentFraction() <= 1)) {
            throw new BadInputException("--silent-fraction must be between 0 and 1, got " + s.silentFraction());
        }
        notNegative("--silence-spread", s.silenceSpreadNanos());
        notNegative("--tolerance", s.toleranceNanos());
        between("--steady-windows", s.steadyWindows(), 1, 100);
        if (s.windowNanos() < TimeUnit.MILLISECONDS.toNanos(100)) {
            throw new BadInputException(
                    "--window must be at least 100ms, got " + DurationConverter.human(s.windowNanos()));
        }
        between("--server-threads", s.serverThreads(), 1, 256);
        between("--client-threads", s.clientThreads(), 1, 256);
        between("--repeat", s.rounds(), 1, 100);
        between("--source-addresses", s.sourceAddresses(), 1, 253);
        if (s.progressNanos() < TimeUnit.MILLISECONDS.toNanos(100)) {
            throw new BadInputException(
                    "--progress-every must be at least 100ms, got " + DurationConverter.human(s.progressNanos()));
        }
        for (IdleHandlerKind kind : s.handlers()) {
            checkAvailable(kind);
        }
        if (needReportDir) {
            checkWritable(s.reportDir());
        }
    }

    private static void checkConnections(Settings s, int connections, Machine machine) {
        if (connections < 1) {
            throw new BadInputException("--connections must be at least 1, got " + connections);
        }
        if (connections < s.baseArms().size()) {
            throw new BadInputException("--connections " + connections + " cannot give each of the "
                    + s.baseArms().size() + " arms a connection");
        }
        if (s.tier() == Tier.TCP && connections > machine.maxTcpConnections()) {
            throw new BadInputException(String.format(
                    Locale.ROOT,
                    "--connections %d is more than the TCP tier can hold here: each process keeps one socket per "
                            + "connection and the open-file limit is %d per process (%d open now, %d reserved), "
                            + "so at most %d; use --transport local for more",
                    connections,
                    machine.maxFileDescriptors(),
                    machine.openFileDescriptors(),
                    FILE_DESCRIPTOR_RESERVE,
                    machine.maxTcpConnections()));
        }
        long needed = HEAP_BYTES_FIXED + connections * HEAP_BYTES_PER_CONNECTION;
        if (needed > machine.maxHeapBytes()) {
            throw new BadInputException(String.format(
                    Locale.ROOT,
                    "--connections %d needs about %d MiB of heap (%d bytes per connection, estimated) but the run "
                            + "would have %d MiB; pass --jvm-opt=-Xmx%dm or fewer connections",
                    connections,
                    needed >> 20,
                    HEAP_BYTES_PER_CONNECTION,
                    machine.maxHeapBytes() >> 20,
                    (needed >> 20) + 512));
        }
    }

    private static void checkAvailable(IdleHandlerKind kind) {
        if (!kind.hasHandler()) {
            return;
        }
        try {
            IdleHandlers.create(kind, 1, 0, 0, TimeUnit.SECONDS);
        } catch (UnsupportedOperationException e) {
            throw new BadInputException(
                    "--idle-handler " + kind + " is not available in this build: " + e.getMessage());
        }
    }

    private static void checkWritable(Path dir) {
        try {
            Files.createDirectories(dir);
            Path probe = Files.createTempFile(dir, ".write-check", ".tmp");
            Files.delete(probe);
        } catch (IOException | SecurityException e) {
            throw new BadInputException("--report-dir " + dir + " cannot be written: " + e);
        }
    }

    private static void positive(String option, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new BadInputException(option + " must be positive, got " + value);
        }
    }

    private static void positive(String option, long nanos) {
        if (nanos <= 0) {
            throw new BadInputException(option + " must be positive, got " + DurationConverter.human(nanos));
        }
    }

    private static void notNegative(String option, long nanos) {
        if (nanos < 0) {
            throw new BadInputException(option + " must not be negative, got " + DurationConverter.human(nanos));
        }
    }

    private static void atLeast(String option, int value, int min) {
        if (value < min) {
            throw new BadInputException(option + " must be at least " + min + ", got " + value);
        }
    }

    private static void between(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new BadInputException(option + " must be between " + min + " and " + max + ", got " + value);
        }
    }

    /** Reads a JVM size such as {@code 6g}, {@code 512m}, {@code 1024k} or bytes. */
    static long parseSize(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g' || last == 't') {
            unit = 1L << (10 * ("kmgt".indexOf(last) + 1));
            t = t.substring(0, t.length() - 1);
        }
        try {
            return Long.parseLong(t) * unit;
        } catch (NumberFormatException e) {
            throw new BadInputException("cannot read the heap size '" + text + "' of -Xmx");
        }
    }
}
