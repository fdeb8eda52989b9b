package io.wheelbeat.loadtest;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run in this JVM: one idle handler, one number of connections.
 *
 * <ol>
 *   <li>Bind the server (probe, idle handler, recorder in every pipeline), read the live heap.</li>
 *   <li>Ramp: open the connections at the configured rate; each sends its hello, then
 *       heartbeats. At the heap checkpoints the ramp pauses for a full-GC heap reading.</li>
 *   <li>Settle for one longest heartbeat gap, so that every connection has re-armed at least
 *       once, and read the heap again.</li>
 *   <li>Silence: the planned connections stop at their planned times, spread over a window.</li>
 *   <li>Wait until the last silenced connection's true deadline plus the tolerance has passed
 *       (and up to 30 s more while silenced connections are still unreported, so that a late
 *       event is judged late rather than never reported), then judge every idle event against
 *       the truth.</li>
 * </ol>
 */
final class ScenarioRun {

    private static final Logger log = LoggerFactory.getLogger(ScenarioRun.class);
    private static final long SETTLE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** How long past the tolerance a run waits for silenced connections still unreported. */
    private static final long LATE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long LATE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long SILENCE_MARGIN_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long DEADLINE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** A ramp that makes no progress for this long is given up; what did not open counts as failed. */
    private static final long STALLED_RAMP_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long LOOP_ANSWER_SECONDS = 60;

    private final Settings s;
    private final IdleHandlerKind kind;
    private final String label;

    /** @param settings a single-run settings ({@link Settings#forRun}) */
    ScenarioRun(Settings settings) {
        this.s = settings;
        this.kind = settings.handler();
        this.label = settings.tier() + " " + kind + " " + settings.connections();
    }

    RunResult run() throws Exception {
        int n = s.connections();
        Transport transport = Transport.of(s.tier());
        SilencePlan plan = s.plan();
        log.info("[{}] {}: {} connections, heartbeat {}, reader idle {}, {}% go silent over {}",
                label, s.tier().description(), n, DurationConverter.human(s.heartbeatNanos())
                        + (s.burst() ? " in synchronised bursts" : " +/- " + Math.round(s.jitter() * 100) + "%"),
                DurationConverter.human(s.readerIdleNanos()), Math.round(s.silentFraction() * 100),
                DurationConverter.human(s.silenceSpreadNanos()));
        ConnectionLedger ledger = new ConnectionLedger(n);
        InstrumentedEventLoopGroup serverLoops = transport.newServerGroup(s.eventLoop(), s.serverThreads());
        LoadClient client = null;
        try (JvmStats jvm = new JvmStats()) {
            Channel server = transport.bind(serverLoops,
                    new ServerInitializer(s.protocol(), kind, s.readerIdleNanos(), ledger, serverLoops));
            client = s.tier() == Tier.LOCAL
                    ? new HeartbeatDriver(s, server.localAddress())
                    : RemoteLoadClient.launch(s, (InetSocketAddress) server.localAddress());
            Progress progress = new Progress(label, kind, client, serverLoops, jvm, s.progressNanos());
            try {
                return measure(n, transport, plan, ledger, serverLoops, jvm, client, progress);
            } finally {
                progress.close();
                client.closeConnections();
                awaitServerChannelsClosed(serverLoops);
            }
        } finally {
            serverLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(2, TimeUnit.MINUTES);
            if (client != null) {
                client.close();
            }
        }
    }

    /**
     * Waits until the server has seen every connection close. A local channel's close is passed
     * to its peer on the peer's event loop, and back, so both groups must run until both ends
     * are closed; shutting either down first makes Netty log a rejected task per connection.
     */
    private void awaitServerChannelsClosed(InstrumentedEventLoopGroup loops) throws Exception {
        long deadline = Clock.nanoTime() + TimeUnit.SECONDS.toNanos(LOOP_ANSWER_SECONDS);
        while (Clock.nanoTime() < deadline) {
            LoopSnapshot s = loops.snapshot(false, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS);
            if (s.channelsClosed() >= s.channelsActive()) {
                return;
            }
            Thread.sleep(20);
        }
        log.warn("[{}] the server still had open connections after {} s; shutting down anyway", label,
                LOOP_ANSWER_SECONDS);
    }

    private RunResult measure(int n, Transport transport, SilencePlan plan, ConnectionLedger ledger,
                              InstrumentedEventLoopGroup serverLoops, JvmStats jvm, LoadClient client,
                              Progress progress) throws Exception {
        double loadAtStart = JvmStats.loadAverage();
        long heapBefore = JvmStats.usedHeapAfterFullGc();
        LoadClient.ClientStats clientBefore = client.stats();
        long cpuBefore = JvmStats.processCpuNanos();
        long serverCpuBefore = serverLoops.cpuNanos();
        long allocatedBefore = JvmStats.allocatedBytes();
        long serverAllocatedBefore = serverLoops.allocatedBytes();
        long start = Clock.nanoTime();
        client.start();

        List<RunResult.HeapPoint> checkpoints = new ArrayList<>();
        long pausedNanos = ramp(n, client, heapBefore, checkpoints);
        double rampSeconds = (Clock.nanoTime() - start - pausedNanos) / 1e9;
        int opened = client.opened();
        log.info("[{}] ramp done: {} opened, {} failed in {} s", label, opened, n - opened,
                String.format(java.util.Locale.ROOT, "%.1f", rampSeconds));

        sleepNanos(s.maxHeartbeatGapNanos() + SETTLE_MARGIN_NANOS);
        long heapAfter = JvmStats.usedHeapAfterFullGc();
        checkpoints.add(new RunResult.HeapPoint(opened, perConnection(heapAfter - heapBefore, opened)));
        log.info("[{}] heap: {} MiB live for {} connections, {} bytes each", label, (heapAfter - heapBefore) >> 20,
                opened, Math.round(perConnection(heapAfter - heapBefore, opened)));

        client.beginSilence();
        sleepNanos(s.silenceSpreadNanos() + SILENCE_MARGIN_NANOS);
        awaitLastDeadline(plan, ledger, serverLoops);
        long end = Clock.nanoTime();

        LoopSnapshot loops = serverLoops.snapshot(kind == IdleHandlerKind.WHEEL, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS);
        LoadClient.ClientStats clientAfter = client.stats();
        double window = (end - start) / 1e9;
        double serverCpu = (serverLoops.cpuNanos() - serverCpuBefore) / 1e9;
        long serverAllocated = serverLoops.allocatedBytes() - serverAllocatedBefore;
        IdleVerdict verdict = ledger.evaluate(plan, s.readerIdleNanos(), s.toleranceNanos());
        JvmStats.GcTotals gc = jvm.totals();
        RunResult result = new RunResult(s.tier().id(), transport.id(), s.tier().description(), kind.id(), 1, n, opened,
                n - opened, loops.channelsActive(), rampSeconds, opened / rampSeconds, window,
                new RunResult.Heap(heapBefore, heapAfter, perConnection(heapAfter - heapBefore, opened), checkpoints),
                TimerAccounting.report(kind, loops, window),
                idle(verdict, loops),
                new RunResult.Traffic(loops.messages(), loops.readBatches(), loops.messages() / window,
                        clientAfter.heartbeatsSent() - clientBefore.heartbeatsSent(),
                        clientAfter.maxSenderLagNanos() / 1e6),
                new RunResult.Gc(jvm.collectorNames(), gc.collections(), gc.pauseMillisTotal(), gc.pauseMillisMax(),
                        gc.explicitCollections(), gc.explicitPauseMillis(), JvmStats.allocatedBytes() - allocatedBefore,
                        serverAllocated, loops.messages() == 0 ? 0 : (double) serverAllocated / loops.messages(),
                        jvm.pauses()),
                new RunResult.Cpu((JvmStats.processCpuNanos() - cpuBefore) / 1e9, serverCpu,
                        (clientAfter.cpuNanos() - clientBefore.cpuNanos()) / 1e9,
                        loops.messages() == 0 ? 0 : serverCpu * 1e9 / loops.messages()),
                machine(loadAtStart), progress.samples());
        if (kind.hasHandler()) {
            log.info("[{}] done in {} s: {} of {} silenced connections detected on time, {} missed, {} false idle "
                            + "events; lateness p50 {} ms, p99 {} ms, max {} ms", label,
                    String.format(java.util.Locale.ROOT, "%.1f", window), verdict.onTime(), verdict.plannedSilent(),
                    verdict.missed(), verdict.falseIdle(), result.idle().lateness().p50Ms(),
                    result.idle().lateness().p99Ms(), result.idle().lateness().maxMs());
        } else {
            log.info("[{}] done in {} s (no idle handler: nothing to detect)", label,
                    String.format(java.util.Locale.ROOT, "%.1f", window));
        }
        return result;
    }

    /**
     * Waits for the ramp, pausing it at each heap checkpoint; returns the time spent paused. A
     * ramp that stops making progress is given up.
     */
    private long ramp(int n, LoadClient client, long heapBefore, List<RunResult.HeapPoint> checkpoints)
            throws Exception {
        int next = 1;
        long paused = 0;
        int lastDone = -1;
        long lastChange = Clock.nanoTime();
        while (!client.rampDone()) {
            int done = client.opened() + client.failed();
            long now = Clock.nanoTime();
            if (done != lastDone) {
                lastDone = done;
                lastChange = now;
            } else if (now - lastChange > STALLED_RAMP_NANOS) {
                log.error("[{}] the ramp has made no progress for 60 s; going on with {} connections", label,
                        client.opened());
                client.pauseOpening();
                break;
            }
            if (next <= s.heapCheckpoints() && done >= (long) n * next / (s.heapCheckpoints() + 1)) {
                client.pauseOpening();
                long heap = JvmStats.usedHeapAfterFullGc();
                int opened = client.opened();
                checkpoints.add(new RunResult.HeapPoint(opened, perConnection(heap - heapBefore, opened)));
                client.resumeOpening();
                paused += Clock.nanoTime() - now;
                lastChange = Clock.nanoTime();
                next++;
            } else {
                Thread.sleep(20);
            }
        }
        return paused;
    }

    /**
     * Waits until the latest true deadline of a silenced connection, plus the tolerance, has
     * passed. Re-reads the deadlines after each wait: a late heartbeat moves one. Then, if some
     * silenced connections are still unreported, waits up to {@link #LATE_GRACE_NANOS} more for
     * them, so that an event late beyond the tolerance (a machine short of CPU) counts as late,
     * with its lateness, rather than as never reported; a punctual run, or one without an idle
     * handler, does not wait for it.
     */
    private void awaitLastDeadline(SilencePlan plan, ConnectionLedger ledger, InstrumentedEventLoopGroup loops)
            throws Exception {
        while (true) {
            loops.snapshot(false, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS); // makes the ledger's writes visible
            long latest = ledger.latestSilentDeadline(plan, s.readerIdleNanos());
            if (latest == Long.MIN_VALUE) {
                return;
            }
            long wait = latest + s.toleranceNanos() + DEADLINE_MARGIN_NANOS - Clock.nanoTime();
            if (wait <= 0) {
                break;
            }
            sleepNanos(wait);
        }
        if (!kind.hasHandler()) {
            return; // the baseline: nothing will be reported
        }
        long graceOver = Clock.nanoTime() + LATE_GRACE_NANOS;
        while (ledger.unreportedSilent(plan) > 0 && Clock.nanoTime() - graceOver < 0) {
            sleepNanos(LATE_POLL_NANOS);
            loops.snapshot(false, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS);
        }
    }

    private RunResult.Idle idle(IdleVerdict v, LoopSnapshot loops) {
        Histogram h = v.lateness();
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buffer);
        String encoded = Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), length));
        RunResult.Lateness lateness = new RunResult.Lateness(h.getTotalCount(), ms(h.getValueAtPercentile(50)),
                ms(h.getValueAtPercentile(99)), ms(h.getValueAtPercentile(99.9)), ms(h.getMaxValue()),
                h.getTotalCount() == 0 ? 0 : h.getMean() / 1e6, encoded);
        return new RunResult.Idle(kind.hasHandler(), v.plannedSilent(), v.neverHeard(), v.onTime(), v.missed(),
                v.missedNotReported(), v.missedLate(), v.falseIdle(), v.falsePremature(), v.falseWhileTalking(),
                v.unidentifiedIdleEvents(), v.badHellos(), loops.firstIdleEvents(), loops.repeatIdleEvents(),
                s.toleranceNanos() / 1e6, lateness);
    }

    private static double ms(long nanos) {
        return Math.round(nanos / 1e3) / 1e3;
    }

    private static double perConnection(long bytes, int connections) {
        return connections == 0 ? 0 : (double) bytes / connections;
    }

    private static RunResult.Machine machine(double loadAtStart) {
        Preflight.Machine m = Preflight.Machine.current(List.of());
        return new RunResult.Machine(Runtime.getRuntime().availableProcessors(), JvmStats.maxHeap(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                ManagementFactory.getRuntimeMXBean().getInputArguments(), m.maxFileDescriptors(), loadAtStart,
                JvmStats.loadAverage());
    }

    private static void sleepNanos(long nanos) throws InterruptedException {
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }

    /**
     * Every server pipeline: probe, the idle handler under test (if any), recorder; over
     * WebSocket the codecs come first and the keepalive of {@code kind} takes the idle handler's place.
     */
    private static final class ServerInitializer extends ChannelInitializer<Channel> {
        private final Protocol protocol;
        private final IdleHandlerKind kind;
        private final long readerIdleNanos;
        private final ConnectionLedger ledger;
        private final InstrumentedEventLoopGroup serverLoops;
        private final IdleRecorder recorder;
        private final WebSocketKeepAliveHandler.Factory keepAlive;

        ServerInitializer(Protocol protocol, IdleHandlerKind kind, long readerIdleNanos, ConnectionLedger ledger,
                          InstrumentedEventLoopGroup serverLoops) {
            this.protocol = protocol;
            this.keepAlive = protocol == Protocol.WEBSOCKET ? WebSocketPipelines.keepAlive(readerIdleNanos) : null;
            this.kind = kind;
            this.readerIdleNanos = readerIdleNanos;
            this.ledger = ledger;
            this.serverLoops = serverLoops;
            this.recorder = new IdleRecorder(ledger, serverLoops);
        }

        @Override
        protected void initChannel(Channel ch) {
            ChannelPipeline p = ch.pipeline();
            if (protocol == Protocol.WEBSOCKET) {
                WebSocketPipelines.addServerHandlers(p, kind, readerIdleNanos, keepAlive,
                        new ServerProbe(ledger, serverLoops));
                p.addLast(recorder);
                return;
            }
            p.addLast(new ServerProbe(ledger, serverLoops));
            if (kind.hasHandler()) {
                p.addLast(IdleHandlers.create(kind, readerIdleNanos, 0, 0, TimeUnit.NANOSECONDS));
            }
            p.addLast(recorder);
        }
    }
}
