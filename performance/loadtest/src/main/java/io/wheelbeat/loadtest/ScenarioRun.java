package io.wheelbeat.loadtest;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One round in this JVM: every arm side by side, one server each with its own event loops, the
 * connections dealt to the arms in equal consecutive shares ({@link Settings#armOf}).
 *
 * <ol>
 *   <li>Bind the arms' servers (probe, idle handler, recorder in every pipeline), read the live
 *       heap.</li>
 *   <li>Ramp: open the connections at the configured rate, arm by arm in the round's order; each
 *       sends its hello, then heartbeats. After each arm's share the ramp pauses for a full-GC
 *       heap reading: the difference to the previous reading is that arm's heap.</li>
 *   <li>Settle for one longest heartbeat gap, so that every connection has re-armed at least
 *       once.</li>
 *   <li>Steady window: every connection open and heartbeating, nothing else happening; each arm's
 *       server-loop CPU, allocation and messages in sub-windows, and JFR execution samples of
 *       the loops ({@link IdleAttribution}).</li>
 *   <li>Silence: the planned connections stop at their planned times, spread over a window.</li>
 *   <li>Wait until the last silenced connection's true deadline plus the tolerance has passed,
 *       or every silenced connection has been reported, then judge every idle event against
 *       the truth, arm by arm.</li>
 * </ol>
 */
final class ScenarioRun {

    private static final Logger log = LoggerFactory.getLogger(ScenarioRun.class);
    private static final long SETTLE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long SILENCE_MARGIN_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long DEADLINE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long REPORTED_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    /** A ramp that makes no progress for this long is given up; what did not open counts as failed. */
    private static final long STALLED_RAMP_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final long LOOP_ANSWER_SECONDS = 60;

    /** One arm's server in this round: its loops, and the ledger of its share of the connections. */
    record ArmServer(Arm arm, InstrumentedEventLoopGroup loops, ConnectionLedger ledger, int first, int end) {}

    private final Settings s;
    private final String label;

    /** @param settings a round's settings ({@link Settings#forRound}) */
    ScenarioRun(Settings settings) {
        this.s = settings;
        this.label = settings.tier() + " " + settings.connections() + " round " + settings.round();
    }

    /** Each arm's result, in the round's arm order. */
    List<RunResult> run() throws Exception {
        int n = s.connections();
        Transport transport = Transport.of(s.tier());
        List<Arm> arms = s.arms();
        log.info(
                "[{}] {}: {} connections over {} side by side, heartbeat {}, reader idle {}, {}% go silent over {}",
                label,
                s.tier().description(),
                n,
                String.join(", ", arms.stream().map(Arm::id).toList()),
                DurationConverter.human(s.heartbeatNanos())
                        + (s.burst() ? " in synchronised bursts" : " +/- " + Math.round(s.jitter() * 100) + "%"),
                DurationConverter.human(s.readerIdleNanos()),
                Math.round(s.silentFraction() * 100),
                DurationConverter.human(s.silenceSpreadNanos()));
        List<ArmServer> servers = new ArrayList<>();
        for (int j = 0; j < arms.size(); j++) {
            int first = Settings.firstOf(j, arms.size(), n);
            int end = Settings.firstOf(j + 1, arms.size(), n);
            servers.add(new ArmServer(
                    arms.get(j),
                    transport.newServerGroup(
                            arms.get(j).loop(),
                            s.serverThreads(),
                            "server-" + arms.get(j).id()),
                    new ConnectionLedger(first, end),
                    first,
                    end));
        }
        LoadClient client = null;
        try (JvmStats jvm = new JvmStats()) {
            long clockOrigin = Clock.nanoTime() - Math.round(jvm.secondsSinceStart() * 1e9);
            List<SocketAddress> addresses = new ArrayList<>();
            for (ArmServer server : servers) {
                addresses.add(transport
                        .bind(
                                server.loops(),
                                new ServerInitializer(
                                        s.protocol(),
                                        server.arm().handler(),
                                        s.readerIdleNanos(),
                                        server.ledger(),
                                        server.loops()))
                        .localAddress());
            }
            client = s.tier() == Tier.LOCAL
                    ? new HeartbeatDriver(s, addresses)
                    : RemoteLoadClient.launch(
                            s,
                            addresses.stream().map(a -> (InetSocketAddress) a).toList());
            try (LoopLagProbe lags = new LoopLagProbe(
                            servers.stream().map(ArmServer::loops).toList(), jvm);
                    Progress progress = new Progress(label, client, servers, lags, jvm, s.progressNanos())) {
                return measure(servers, jvm, clockOrigin, client, lags, progress);
            } finally {
                client.closeConnections();
                for (ArmServer server : servers) {
                    awaitServerChannelsClosed(server.loops());
                }
            }
        } finally {
            for (ArmServer server : servers) {
                server.loops().shutdownGracefully(0, 5, TimeUnit.SECONDS).await(2, TimeUnit.MINUTES);
            }
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
        log.warn(
                "[{}] the server still had open connections after {} s; shutting down anyway",
                label,
                LOOP_ANSWER_SECONDS);
    }

    /** One arm's share of the ramp: heap readings around it, connects, time. */
    private record Share(
            JvmStats.HeapReading heapBefore, JvmStats.HeapReading heapAfter, int opened, int failed, double seconds) {

        RunResult.Heap heap() {
            double used = perConnection(heapAfter.usedBytes() - heapBefore.usedBytes(), opened);
            double live = perConnection(heapAfter.liveBytes() - heapBefore.liveBytes(), opened);
            return new RunResult.Heap(
                    heapBefore.usedBytes(),
                    heapAfter.usedBytes(),
                    used,
                    heapBefore.liveBytes(),
                    heapAfter.liveBytes(),
                    live,
                    ClassHistogram.perConnection(
                            heapAfter.live().growthSince(heapBefore.live()), opened, ClassHistogram.SHOWN_BYTES),
                    List.of(new RunResult.HeapPoint(opened, live)));
        }
    }

    /** @param clockOrigin the reading of {@link Clock} at second 0 of {@code jvm}'s clock */
    private List<RunResult> measure(
            List<ArmServer> servers,
            JvmStats jvm,
            long clockOrigin,
            LoadClient client,
            LoopLagProbe lags,
            Progress progress)
            throws Exception {
        int k = servers.size();
        double loadAtStart = JvmStats.loadAverage();
        for (ArmServer server : servers) {
            if (server.arm().handler() == IdleHandlerKind.WHEEL) {
                // Reading a loop's shared wheel makes it: per-loop state, like a Netty loop's task queue, made
                // before the first heap reading instead of in whichever share first reads or uses it.
                server.loops().snapshot(true, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS);
            }
        }
        JvmStats.HeapReading heapBefore = JvmStats.readHeap();
        LoadClient.ClientStats clientBefore = client.stats();
        long cpuBefore = JvmStats.processCpuNanos();
        long allocatedBefore = JvmStats.allocatedBytes();
        long[] serverCpuBefore = new long[k];
        long[] serverAllocatedBefore = new long[k];
        for (int j = 0; j < k; j++) {
            serverCpuBefore[j] = servers.get(j).loops().cpuNanos();
            serverAllocatedBefore[j] = servers.get(j).loops().allocatedBytes();
        }
        long start = Clock.nanoTime();
        client.start();
        List<Share> shares = ramp(servers, client, heapBefore);
        log.info("[{}] ramp done: {} opened, {} failed", label, client.opened(), client.failed());

        sleepNanos(s.maxHeartbeatGapNanos() + SETTLE_MARGIN_NANOS);
        List<List<RunResult.Window>> windows = new ArrayList<>();
        List<RunResult.Attribution> attributions = new ArrayList<>();
        steady(servers, lags, windows, attributions);

        client.beginSilence();
        sleepNanos(s.silenceSpreadNanos() + SILENCE_MARGIN_NANOS);
        awaitLastDeadline(servers);
        long end = Clock.nanoTime();

        LoadClient.ClientStats clientAfter = client.stats();
        double window = (end - start) / 1e9;
        JvmStats.GcTotals gc = jvm.totals();
        List<RunResult> results = new ArrayList<>();
        for (int j = 0; j < k; j++) {
            ArmServer server = servers.get(j);
            IdleHandlerKind kind = server.arm().handler();
            LoopSnapshot loops =
                    server.loops().snapshot(kind == IdleHandlerKind.WHEEL, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS);
            double serverCpu = (server.loops().cpuNanos() - serverCpuBefore[j]) / 1e9;
            long serverAllocated = server.loops().allocatedBytes() - serverAllocatedBefore[j];
            IdleVerdict verdict = server.ledger().evaluate(s.plan(), s.readerIdleNanos(), s.toleranceNanos());
            Share share = shares.get(j);
            int armConnections = server.end() - server.first();
            RunResult.Gc gcResult = new RunResult.Gc(
                    jvm.collectorNames(),
                    gc.collections(),
                    gc.pauseMillisTotal(),
                    gc.pauseMillisMax(),
                    gc.explicitCollections(),
                    gc.explicitPauseMillis(),
                    JvmStats.allocatedBytes() - allocatedBefore,
                    serverAllocated,
                    loops.messages() == 0 ? 0 : (double) serverAllocated / loops.messages(),
                    jvm.pauses());
            RunResult result = new RunResult(
                    s.tier().id(),
                    Transport.of(s.tier()).id(),
                    s.tier().description(),
                    server.arm().id(),
                    s.round(),
                    s.connections(),
                    share.opened(),
                    armConnections - share.opened(),
                    loops.channelsActive(),
                    share.seconds(),
                    share.opened() / share.seconds(),
                    window,
                    share.heap(),
                    TimerAccounting.report(kind, loops, window),
                    idle(
                            kind,
                            verdict,
                            loops,
                            server.ledger().latenessOverTime(s.plan(), s.readerIdleNanos(), clockOrigin)),
                    new RunResult.Traffic(
                            loops.messages(),
                            loops.readBatches(),
                            loops.messages() / window,
                            clientAfter.heartbeatsSent() - clientBefore.heartbeatsSent(),
                            clientAfter.maxSenderLagNanos() / 1e6),
                    gcResult,
                    new RunResult.Cpu(
                            (JvmStats.processCpuNanos() - cpuBefore) / 1e9,
                            serverCpu,
                            (clientAfter.cpuNanos() - clientBefore.cpuNanos()) / 1e9,
                            loops.messages() == 0 ? 0 : serverCpu * 1e9 / loops.messages()),
                    machine(loadAtStart),
                    steadyResult(share.opened(), windows.get(j), attributions.get(j)),
                    lags.lag(j).result(lags.lag(j).windowMaxMs()),
                    progress.samples(j));
            results.add(result);
            if (kind.hasHandler()) {
                log.info(
                        "[{}] {}: {} of {} silenced connections detected on time, {} missed, {} false idle events; "
                                + "lateness p50 {} ms, p99 {} ms, max {} ms; steady loop CPU {} ns/message",
                        label,
                        server.arm().id(),
                        verdict.onTime(),
                        verdict.plannedSilent(),
                        verdict.missed(),
                        verdict.falseIdle(),
                        result.idle().lateness().p50Ms(),
                        result.idle().lateness().p99Ms(),
                        result.idle().lateness().maxMs(),
                        Math.round(result.steady().loopNanosPerMessage()));
            }
        }
        log.info("[{}] done in {} s", label, String.format(java.util.Locale.ROOT, "%.1f", window));
        return results;
    }

    /**
     * The ramp, arm by arm: the client pauses itself at the start of each arm's share; each pause
     * takes a full-GC heap reading. A ramp that stops making progress is given up.
     */
    private List<Share> ramp(List<ArmServer> servers, LoadClient client, JvmStats.HeapReading heapBefore)
            throws Exception {
        List<Share> shares = new ArrayList<>();
        JvmStats.HeapReading heap = heapBefore;
        int openedBefore = 0;
        int failedBefore = 0;
        long shareStart = Clock.nanoTime();
        int lastDone = -1;
        long lastChange = shareStart;
        for (ArmServer server : servers) {
            while (client.opened() + client.failed() < server.end() && !client.rampDone()) {
                int done = client.opened() + client.failed();
                long now = Clock.nanoTime();
                if (done != lastDone) {
                    lastDone = done;
                    lastChange = now;
                } else if (now - lastChange > STALLED_RAMP_NANOS) {
                    log.error(
                            "[{}] the ramp has made no progress for 60 s; going on with {} connections",
                            label,
                            client.opened());
                    break;
                }
                Thread.sleep(20);
            }
            client.pauseOpening();
            double seconds = (Clock.nanoTime() - shareStart) / 1e9;
            JvmStats.HeapReading after = JvmStats.readHeap();
            int opened = client.opened();
            int failed = client.failed();
            shares.add(new Share(heap, after, opened - openedBefore, failed - failedBefore, seconds));
            log.info(
                    "[{}] {}: {} connections opened in {} s, {} bytes each on the heap, {} in live objects",
                    label,
                    server.arm().id(),
                    opened - openedBefore,
                    String.format(java.util.Locale.ROOT, "%.1f", seconds),
                    Math.round(perConnection(after.usedBytes() - heap.usedBytes(), opened - openedBefore)),
                    Math.round(perConnection(after.liveBytes() - heap.liveBytes(), opened - openedBefore)));
            heap = after;
            openedBefore = opened;
            failedBefore = failed;
            client.resumeOpening();
            shareStart = Clock.nanoTime();
            lastChange = shareStart;
        }
        return shares;
    }

    /**
     * The steady window: each arm's loop CPU, allocation and messages read at the sub-window
     * boundaries, and the loops' execution samples over the whole window.
     */
    private void steady(
            List<ArmServer> servers,
            LoopLagProbe lags,
            List<List<RunResult.Window>> windows,
            List<RunResult.Attribution> attributions)
            throws Exception {
        int k = servers.size();
        long[][] reading = new long[k][];
        servers.forEach(a -> windows.add(new ArrayList<>()));
        try (IdleAttribution jfr = new IdleAttribution()) {
            jfr.start();
            for (int j = 0; j < k; j++) {
                lags.lag(j).startWindow();
            }
            long at = Clock.nanoTime();
            for (int j = 0; j < k; j++) {
                reading[j] = read(servers.get(j));
            }
            for (int w = 0; w < s.steadyWindows(); w++) {
                sleepNanos(at + s.windowNanos() - Clock.nanoTime());
                long now = Clock.nanoTime();
                for (int j = 0; j < k; j++) {
                    long[] next = read(servers.get(j));
                    windows.get(j)
                            .add(new RunResult.Window(
                                    (now - at) / 1e9,
                                    next[0] - reading[j][0],
                                    next[1] - reading[j][1],
                                    next[2] - reading[j][2]));
                    reading[j] = next;
                }
                at = now;
            }
            List<List<jdk.jfr.consumer.RecordedEvent>> samples =
                    jfr.stop(servers.stream().map(a -> a.loops().threadNames()).toList());
            for (int j = 0; j < k; j++) {
                attributions.add(IdleAttribution.attribute(samples.get(j), nanosPerMessage(windows.get(j))));
            }
        }
    }

    /** CPU, messages and allocation of one arm's loops so far. */
    private static long[] read(ArmServer server) throws Exception {
        long messages = server.loops()
                .snapshot(false, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS)
                .messages();
        return new long[] {server.loops().cpuNanos(), messages, server.loops().allocatedBytes()};
    }

    private static double nanosPerMessage(List<RunResult.Window> windows) {
        long cpu = windows.stream().mapToLong(RunResult.Window::loopCpuNanos).sum();
        long messages = windows.stream().mapToLong(RunResult.Window::messages).sum();
        return messages == 0 ? 0 : (double) cpu / messages;
    }

    private static RunResult.Steady steadyResult(
            int connections, List<RunResult.Window> windows, RunResult.Attribution attribution) {
        double seconds = windows.stream().mapToDouble(RunResult.Window::seconds).sum();
        long cpu = windows.stream().mapToLong(RunResult.Window::loopCpuNanos).sum();
        long messages = windows.stream().mapToLong(RunResult.Window::messages).sum();
        long allocated =
                windows.stream().mapToLong(RunResult.Window::loopAllocatedBytes).sum();
        return new RunResult.Steady(
                connections,
                seconds,
                windows,
                nanosPerMessage(windows),
                connections == 0 || seconds == 0 ? 0 : cpu / (connections * seconds),
                messages == 0 ? 0 : (double) allocated / messages,
                attribution);
    }

    /**
     * Waits until the latest true deadline of a silenced connection, plus the tolerance, has
     * passed, or until every arm with an idle handler has reported all its silenced connections.
     * Re-reads the deadlines after each wait: a late heartbeat moves one.
     */
    private void awaitLastDeadline(List<ArmServer> servers) throws Exception {
        boolean anyHandler = servers.stream().anyMatch(a -> a.arm().handler().hasHandler());
        while (true) {
            long latest = Long.MIN_VALUE;
            boolean allReported = anyHandler;
            for (ArmServer server : servers) {
                server.loops()
                        .snapshot(false, LOOP_ANSWER_SECONDS, TimeUnit.SECONDS); // makes the ledger's writes visible
                latest = Math.max(latest, server.ledger().latestSilentDeadline(s.plan(), s.readerIdleNanos()));
                allReported &=
                        !server.arm().handler().hasHandler() || server.ledger().everySilentReported(s.plan());
            }
            long wait = latest + s.toleranceNanos() + DEADLINE_MARGIN_NANOS - Clock.nanoTime();
            if (latest == Long.MIN_VALUE || allReported || wait <= 0) {
                return;
            }
            sleepNanos(Math.min(wait, REPORTED_POLL_NANOS));
        }
    }

    private RunResult.Idle idle(
            IdleHandlerKind kind, IdleVerdict v, LoopSnapshot loops, List<RunResult.LateSecond> overTime) {
        Histogram h = v.lateness();
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buffer);
        String encoded = Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), length));
        RunResult.Lateness lateness = new RunResult.Lateness(
                h.getTotalCount(),
                ms(h.getValueAtPercentile(50)),
                ms(h.getValueAtPercentile(99)),
                ms(h.getValueAtPercentile(99.9)),
                ms(h.getMaxValue()),
                h.getTotalCount() == 0 ? 0 : h.getMean() / 1e6,
                encoded);
        return new RunResult.Idle(
                kind.hasHandler(),
                v.plannedSilent(),
                v.neverHeard(),
                v.onTime(),
                v.missed(),
                v.missedNotReported(),
                v.missedLate(),
                v.falseIdle(),
                v.falsePremature(),
                v.falseWhileTalking(),
                v.unidentifiedIdleEvents(),
                v.badHellos(),
                loops.firstIdleEvents(),
                loops.repeatIdleEvents(),
                s.toleranceNanos() / 1e6,
                lateness,
                overTime);
    }

    private static double ms(long nanos) {
        return Math.round(nanos / 1e3) / 1e3;
    }

    private static double perConnection(long bytes, int connections) {
        return connections == 0 ? 0 : (double) bytes / connections;
    }

    private static RunResult.Machine machine(double loadAtStart) {
        Preflight.Machine m = Preflight.Machine.current(List.of());
        return new RunResult.Machine(
                Runtime.getRuntime().availableProcessors(),
                JvmStats.maxHeap(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                ManagementFactory.getRuntimeMXBean().getInputArguments(),
                m.maxFileDescriptors(),
                loadAtStart,
                JvmStats.loadAverage());
    }

    private static void sleepNanos(long nanos) throws InterruptedException {
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }

    /**
     * Every server pipeline: probe, the idle handler under test (if any), recorder; over
     * WebSocket the codecs come first (behind wheelbeat's idle handler) and the keepalive of {@code kind} follows.
     */
    private static final class ServerInitializer extends ChannelInitializer<Channel> {
        private final Protocol protocol;
        private final IdleHandlerKind kind;
        private final long readerIdleNanos;
        private final ConnectionLedger ledger;
        private final InstrumentedEventLoopGroup serverLoops;
        private final IdleRecorder recorder;
        private final WebSocketKeepAliveHandler.Factory keepAlive;

        ServerInitializer(
                Protocol protocol,
                IdleHandlerKind kind,
                long readerIdleNanos,
                ConnectionLedger ledger,
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
                WebSocketPipelines.addServerHandlers(
                        p, kind, readerIdleNanos, keepAlive, new ServerProbe(ledger, serverLoops));
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
