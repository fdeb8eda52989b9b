package io.wheelbeat.loadtest;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The load test's command line: {@code java -jar loadtest.jar [options]}. Runs the scenario in
 * rounds, each a JVM of its own holding every arm (an idle handler asked for, the no-handler
 * baseline, or a loop group) side by side, and writes the JSON and Markdown reports and the
 * charts. {@code --help} lists the options.
 *
 * <p>Exit codes: 0 the session was valid and wheelbeat reported every silenced connection on
 * time and nothing else (a peer's misses are a row of the verdict); 1 a run crashed; 2 bad input
 * (nothing was started); 3 wheelbeat missed a silenced connection or reported a talking one idle;
 * 4 the session is not valid (a connection failed to open). The console's last line says why
 * the status is not 0 ({@link ExitStatus}).
 */
@Command(
        name = "loadtest",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        version = "wheelbeat loadtest 0.1.0",
        description = {
            "Holds many connections on one server whose reader-idle deadlines are re-armed by every heartbeat, "
                    + "silences a known share of them, and checks that the idle handler reports exactly those, "
                    + "how late, and at what cost in heap, timer operations, GC and CPU.",
            "",
            "Tiers: local (default) simulates the connections with Netty's local transport in one JVM: the "
                    + "server pipeline, event loops and idle handler are the real ones, the connections are not "
                    + "sockets. tcp uses real loopback sockets with the clients in a separate process; the "
                    + "open-file limit caps it (one socket per connection in each process).",
            ""
        },
        footer = {
            "",
            "Examples (java -jar loadtest.jar ...):",
            "  (no options)                        500k local over three arms side by side (wheel, netty, no handler),",
            "                                      3 rounds; ends with the verdict and its 95% intervals",
            "  --repeat 6                          6 rounds: narrower intervals",
            "  --event-loop netty,wheel            Netty's loop group against WheelIoEventLoopGroup, side by side,",
            "                                      Netty's handler on both, and the baseline",
            "  --quick --idle-handler netty        20k connections, about 30 s",
            "  --transport tcp                     TCP: as many as the file limit allows",
            "  --scaling --idle-handler wheel,netty  10k, 50k, 100k, 250k, 500k"
        })
public final class LoadTest implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(LoadTest.class);

    static final int EXIT_CRASHED = 1;
    static final int EXIT_BAD_INPUT = 2;

    /** The defaults of a full run and of a quick one. */
    private enum Preset {
        // A steady sub-window as long as the reader-idle limit: every connection's idle check
        // comes due once in each, whichever share of the ramp it was opened in.
        FULL(500_000, 5_000, 5_000, 20_000, 2_000, 2, 20_000, 5_000),
        QUICK(20_000, 1_000, 2_000, 5_000, 1_000, 2, 5_000, 2_000);

        final int connections;
        final long heartbeatMs;
        final long spreadMs;
        final long readerIdleMs;
        final long toleranceMs;
        final int steadyWindows;
        final long windowMs;
        final long progressMs;

        Preset(
                int connections,
                long heartbeatMs,
                long spreadMs,
                long readerIdleMs,
                long toleranceMs,
                int steadyWindows,
                long windowMs,
                long progressMs) {
            this.connections = connections;
            this.heartbeatMs = heartbeatMs;
            this.spreadMs = spreadMs;
            this.readerIdleMs = readerIdleMs;
            this.toleranceMs = toleranceMs;
            this.steadyWindows = steadyWindows;
            this.windowMs = windowMs;
            this.progressMs = progressMs;
        }
    }

    private static final List<Integer> SCALING_SIZES = List.of(10_000, 50_000, 100_000, 250_000, 500_000);
    private static final List<Integer> QUICK_SCALING_SIZES = List.of(5_000, 10_000, 20_000);
    private static final double LOCAL_OPEN_RATE = 50_000;
    private static final double TCP_OPEN_RATE = 5_000;
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final int DEFAULT_ROUNDS = 3;

    @Option(
            names = "--connections",
            paramLabel = "N",
            description =
                    "Connections per run (default: 500000, --quick 20000; tcp: as many as the open-file limit allows).")
    Integer connections;

    @Option(
            names = "--transport",
            paramLabel = "local|tcp",
            converter = TierConverter.class,
            description = "local: simulated connections in one JVM (default); tcp: loopback sockets, clients in another"
                    + " process.")
    Tier tier = Tier.LOCAL;

    @Option(
            names = "--protocol",
            paramLabel = "frames|websocket",
            converter = ProtocolConverter.class,
            description = "frames: the load test's own bytes (default); websocket: HTTP upgrade, binary frames, "
                    + "the server pinging; wheel = WebSocketKeepAliveHandler, netty = IdleStateHandler + pings.")
    Protocol protocol = Protocol.FRAMES;

    @Option(
            names = "--idle-handler",
            paramLabel = "KIND",
            split = ",",
            converter = KindConverter.class,
            description = "wheel, netty or none; a comma-separated list runs each as an arm beside the others "
                    + "(default: wheel,netty; with two --event-loop kinds: netty).")
    List<IdleHandlerKind> handlers;

    @Option(
            names = "--repeat",
            paramLabel = "N",
            description =
                    "Rounds: N JVMs one after the other, each with every arm side by side, the arms' order rotated "
                            + "from round to round; more rounds narrow the confidence intervals (default: 3, or with"
                            + " two "
                            + "arms 4, so that each arm's share is opened first and last equally often).")
    Integer repeats;

    @Option(names = "--round", hidden = true, description = "Which round this JVM runs (its arm order).")
    int round;

    @Option(
            names = "--baseline",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description =
                    "Also run without an idle handler, to tell what the idle machinery itself costs (default: on).")
    boolean baseline;

    @Option(
            names = "--report-dir",
            paramLabel = "DIR",
            description = "Where the reports and charts go (default: ${DEFAULT-VALUE}).")
    Path reportDir = Path.of("loadtest-report");

    @Option(
            names = "--quick",
            description = "Quick preset: 20000 connections, 1s heartbeats, 5s reader idle; explicit options still win.")
    boolean quick;

    @Option(names = "--scaling", description = "Run 10k, 50k, 100k, 250k and 500k connections (--quick: 5k, 10k, 20k).")
    boolean scaling;

    @Option(
            names = "--scaling-sizes",
            paramLabel = "N",
            split = ",",
            description = "Sizes for --scaling instead of the default series.")
    List<Integer> scalingSizes;

    @Option(
            names = "--open-rate",
            paramLabel = "PER_SECOND",
            description = "Connections opened per second (default: 50000 local, 5000 tcp).")
    Double openRate;

    @Option(
            names = "--max-pending-connects",
            paramLabel = "N",
            description = "Connects in flight at most (default: ${DEFAULT-VALUE}).")
    int maxPendingConnects = 1000;

    @Option(
            names = "--heartbeat",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Mean heartbeat interval (default: 5s, --quick 1s).")
    Long heartbeat;

    @Option(
            names = "--jitter",
            paramLabel = "FRACTION",
            description = "Each interval is heartbeat x (1 +/- jitter), uniform (default: ${DEFAULT-VALUE}).")
    double jitter = 0.2;

    @Option(
            names = "--burst",
            description = "Synchronised bursts: every connection sends at the same moments, no jitter.")
    boolean burst;

    @Option(
            names = "--silent-fraction",
            paramLabel = "FRACTION",
            description = "Share of connections that go silent (default: ${DEFAULT-VALUE}).")
    double silentFraction = 0.1;

    @Option(
            names = "--silence-spread",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description =
                    "The silent connections stop at known times spread over this window (default: 5s, --quick 2s).")
    Long silenceSpread;

    @Option(
            names = "--reader-idle",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Reader-idle limit of the idle handler (default: 20s, --quick 5s).")
    Long readerIdle;

    @Option(
            names = "--tolerance",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description =
                    "An idle event later than true deadline + tolerance counts as missed (default: 2s, --quick 1s).")
    Long tolerance;

    @Option(
            names = "--steady-windows",
            paramLabel = "N",
            description = "Sub-windows of the steady window (after ramp and settle, before the silence) in which "
                    + "server-loop CPU is measured (default: 2).")
    Integer steadyWindows;

    @Option(
            names = "--window",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Length of one steady sub-window (default: 20s, --quick 5s: the reader-idle limit).")
    Long window;

    @Option(
            names = "--event-loop",
            paramLabel = "netty|wheel",
            split = ",",
            converter = EventLoopConverter.class,
            description = "The servers' event loops: netty = MultiThreadIoEventLoopGroup (default); "
                    + "wheel = WheelIoEventLoopGroup, every scheduled task on the loop's timing wheel; "
                    + "netty,wheel = compare the two groups side by side, one idle handler on both, the baseline "
                    + "none on Netty's.")
    List<EventLoopKind> eventLoops = new ArrayList<>(List.of(EventLoopKind.NETTY));

    @Option(
            names = "--server-threads",
            paramLabel = "N",
            description = "Event loops of each arm's server (default: cores).")
    int serverThreads = Runtime.getRuntime().availableProcessors();

    @Option(names = "--client-threads", paramLabel = "N", description = "Client event loops (default: cores).")
    int clientThreads = Runtime.getRuntime().availableProcessors();

    @Option(
            names = "--source-addresses",
            paramLabel = "N",
            description = "tcp: loopback source addresses the clients rotate over, from 127.0.0.2 (default:"
                    + " ${DEFAULT-VALUE}).")
    int sourceAddresses = 250;

    @Option(
            names = "--progress-every",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Time between progress lines (default: 5s, --quick 2s).")
    Long progressEvery;

    @Option(names = "--seed", description = "Seeds the silence plan and the jitter (default: ${DEFAULT-VALUE}).")
    long seed = 42;

    @Option(
            names = "--jvm-opt",
            paramLabel = "OPTION",
            description = "An option for each run's JVM, e.g. --jvm-opt=-Xmx8g (repeatable; this JVM's own options are"
                    + " passed on too).")
    List<String> jvmOptions = new ArrayList<>();

    @Option(names = "--in-process", hidden = true, description = "Run every handler in this JVM (tests).")
    boolean inProcess;

    @Option(names = "--worker", hidden = true, description = "Run one handler in this JVM and write --result-file.")
    boolean worker;

    @Option(names = "--result-file", hidden = true)
    Path resultFile;

    @Option(names = "--tcp-client", hidden = true, description = "Be the TCP tier's client process.")
    boolean tcpClient;

    @Option(names = "--connect", hidden = true, paramLabel = "HOST:PORT[,HOST:PORT...]")
    String connect;

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(commandLine().execute(args));
    }

    /** The command line with the load test's handling of bad input and crashes. */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new LoadTest());
        cl.setParameterExceptionHandler((ex, args) -> {
            ex.getCommandLine().getErr().println("loadtest: " + ex.getMessage());
            ex.getCommandLine().getErr().println("Run with --help for the options.");
            return EXIT_BAD_INPUT;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof Preflight.BadInputException) {
                commandLine.getErr().println("loadtest: " + ex.getMessage());
                commandLine.getErr().println("Run with --help for the options.");
                return EXIT_BAD_INPUT;
            }
            commandLine.getErr().println("loadtest: the run failed: " + ex);
            ex.printStackTrace(commandLine.getErr());
            return EXIT_CRASHED;
        });
        return cl;
    }

    @Override
    public Integer call() throws Exception {
        if (tcpClient) {
            List<InetSocketAddress> servers = new ArrayList<>();
            for (String server : connect == null ? new String[] {null} : connect.split(",")) {
                servers.add(hostAndPort(server));
            }
            return TcpClientProcess.run(resolve(Preflight.Machine.current(List.of())), servers);
        }
        if (worker) {
            Settings settings = resolve(Preflight.Machine.current(List.of()));
            Preflight.check(settings, Preflight.Machine.current(List.of()), false);
            if (resultFile == null || settings.sizes().size() != 1 || settings.round() < 1) {
                throw new Preflight.BadInputException("--worker needs --result-file, one size and --round");
            }
            Report.writeRuns(new ScenarioRun(settings).run(), resultFile);
            return 0;
        }
        Preflight.Machine machine =
                Preflight.Machine.current(inProcess ? List.of() : ChildJvm.effectiveOptions(jvmOptions));
        Settings settings = resolve(machine);
        Preflight.check(settings, machine, true);
        List<RunResult> runs = new Session(settings).run();
        Report report = new Report(settings, runs);
        report.write();
        log.info("reports written to {}", settings.reportDir().toAbsolutePath());
        // The console's last lines: who won, as report.md opens with.
        System.out.println();
        System.out.print(report.verdictsText());
        ExitStatus status = report.exitStatus();
        if (status.code() != ExitStatus.OK) {
            System.out.println(status.reason());
        }
        System.out.flush();
        return status.code();
    }

    /** The session's settings from the parsed options, presets filled in. */
    Settings resolve(Preflight.Machine machine) {
        Preset preset = quick ? Preset.QUICK : Preset.FULL;
        List<Integer> sizes;
        if (scaling || scalingSizes != null) {
            if (connections != null) {
                throw new Preflight.BadInputException(
                        "--connections and --scaling exclude each other; " + "give the sizes with --scaling-sizes");
            }
            sizes = scalingSizes != null ? scalingSizes : quick ? QUICK_SCALING_SIZES : SCALING_SIZES;
        } else if (connections != null) {
            sizes = List.of(connections);
        } else if (tier == Tier.TCP) {
            int fit = Math.min(preset.connections, machine.maxTcpConnections());
            log.info(
                    "TCP tier: open-file limit {} per process, so {} connections (one socket each in each process)",
                    machine.maxFileDescriptors(),
                    fit);
            sizes = List.of(fit);
        } else {
            sizes = List.of(preset.connections);
        }
        boolean comparesLoops = eventLoops.size() > 1;
        List<IdleHandlerKind> kinds = new ArrayList<>(
                handlers != null
                        ? handlers
                        : comparesLoops
                                ? List.of(IdleHandlerKind.NETTY)
                                : List.of(IdleHandlerKind.WHEEL, IdleHandlerKind.NETTY));
        if (baseline && !kinds.contains(IdleHandlerKind.NONE)) {
            kinds.add(IdleHandlerKind.NONE);
        }
        int arms = comparesLoops ? eventLoops.size() + kinds.size() - 1 : kinds.size();
        // A later share of the ramp reads more heap per connection: every arm takes every place equally often.
        int rounds = repeats != null ? repeats : (DEFAULT_ROUNDS + arms - 1) / arms * arms;
        return new Settings(
                tier,
                protocol,
                sizes,
                kinds,
                eventLoops,
                rounds,
                round,
                reportDir,
                openRate != null ? openRate : tier == Tier.LOCAL ? LOCAL_OPEN_RATE : TCP_OPEN_RATE,
                maxPendingConnects,
                orMillis(heartbeat, preset.heartbeatMs),
                jitter,
                burst,
                silentFraction,
                orMillis(silenceSpread, preset.spreadMs),
                orMillis(readerIdle, preset.readerIdleMs),
                orMillis(tolerance, preset.toleranceMs),
                steadyWindows != null ? steadyWindows : preset.steadyWindows,
                orMillis(window, preset.windowMs),
                serverThreads,
                clientThreads,
                sourceAddresses,
                orMillis(progressEvery, preset.progressMs),
                seed,
                jvmOptions,
                inProcess);
    }

    private static long orMillis(Long nanos, long defaultMillis) {
        return nanos != null ? nanos : defaultMillis * NANOS_PER_MILLI;
    }

    private static InetSocketAddress hostAndPort(String text) {
        int colon = text == null ? -1 : text.lastIndexOf(':');
        if (colon < 0) {
            throw new Preflight.BadInputException("--connect needs HOST:PORT, got " + text);
        }
        return new InetSocketAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
    }

    /**
     * Parses an option's value as one of an enum's constants by its {@code toString()} (the id
     * the reports use), ignoring case; the error names every id. A new choice option needs only
     * a one-line subclass.
     */
    abstract static class ChoiceConverter<E extends Enum<E>> implements CommandLine.ITypeConverter<E> {
        private final Class<E> type;
        private final String what;

        ChoiceConverter(Class<E> type, String what) {
            this.type = type;
            this.what = what;
        }

        @Override
        public E convert(String value) {
            E[] choices = type.getEnumConstants();
            for (E choice : choices) {
                if (choice.toString().equalsIgnoreCase(value.trim())) {
                    return choice;
                }
            }
            StringBuilder expected = new StringBuilder();
            for (int i = 0; i < choices.length; i++) {
                expected.append(i == 0 ? "" : i == choices.length - 1 ? " or " : ", ")
                        .append(choices[i]);
            }
            throw new CommandLine.TypeConversionException(
                    "unknown " + what + " '" + value + "' (expected " + expected + ")");
        }
    }

    static final class TierConverter extends ChoiceConverter<Tier> {
        TierConverter() {
            super(Tier.class, "transport");
        }
    }

    static final class ProtocolConverter extends ChoiceConverter<Protocol> {
        ProtocolConverter() {
            super(Protocol.class, "protocol");
        }
    }

    static final class EventLoopConverter extends ChoiceConverter<EventLoopKind> {
        EventLoopConverter() {
            super(EventLoopKind.class, "event loop");
        }
    }

    static final class KindConverter extends ChoiceConverter<IdleHandlerKind> {
        KindConverter() {
            super(IdleHandlerKind.class, "idle handler");
        }
    }
}
