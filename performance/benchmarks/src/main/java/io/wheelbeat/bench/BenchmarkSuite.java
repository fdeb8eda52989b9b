package io.wheelbeat.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Runs the whole benchmark suite in one command and writes, to {@code --out}:
 * {@code results.json} (JMH's JSON of every benchmark), {@code memory.txt} (memory per pending
 * timer, one line per measurement) and {@code summary.md} (the tables with ratios ours / peer).
 *
 * <pre>java -jar performance/benchmarks/target/benchmarks.jar [--quick] [--out reports/bench] [--only REGEX]</pre>
 *
 * <p>Exit code 0 when every planned benchmark produced a result, 1 when some did not (the reports
 * are still written and say which), 2 on bad arguments.
 */
@Command(
        name = "benchmarks",
        mixinStandardHelpOptions = true,
        description = "Runs wheelbeat's JMH suite against the peers and writes JSON plus a Markdown table of ratios.")
public final class BenchmarkSuite implements Callable<Integer> {

    static final List<String> ALL =
            Arrays.stream(Contender.values()).map(c -> c.id).toList();
    static final List<String> OWNER_THREAD = Arrays.stream(Contender.values())
            .filter(c -> !c.threaded)
            .map(c -> c.id)
            .toList();
    static final List<String> THREADED = Arrays.stream(Contender.values())
            .filter(c -> c.threaded)
            .map(c -> c.id)
            .toList();
    /** Forked benchmark JVMs: room for Agrona's burst (its per-tick capacity grows to 2 GiB). */
    static final List<String> FORK_JVM_ARGS = List.of("-Xms1g", "-Xmx4g");

    @Option(names = "--quick", description = "A run of a few minutes: 1 fork, short iterations, fewer sizes.")
    boolean quick;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            description = "Where to write the reports (default: ${DEFAULT-VALUE}).")
    Path out = Path.of("reports", "bench");

    @Option(
            names = "--only",
            paramLabel = "REGEX",
            description = "Run only the steps whose name matches (steps: rearm-2000, rearm-30000, rearm-ours-sizes,"
                    + " rearm-fixed-orders, "
                    + "rearm-breakdown, schedule-cancel, "
                    + "expire-owner, expire-threaded, idle-advance, burst, burst-punctual, handler, ratelimit,"
                    + " memory).")
    Pattern only;

    @Option(names = "--list", description = "Print the plan and exit.")
    boolean list;

    /**
     * One JMH run of the plan: benchmark methods ({@code Class.method}, or {@code Class.*} for
     * {@code methods} of them) and the parameter values to cross.
     */
    record Step(String name, String benchmark, int methods, Map<String, List<String>> params) {
        Step(String name, String benchmark, Map<String, List<String>> params) {
            this(name, benchmark, 1, params);
        }

        int combinations() {
            return methods * params.values().stream().mapToInt(List::size).reduce(1, (a, b) -> a * b);
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchmarkSuite()).execute(args));
    }

    /** The steps of a run. */
    static List<Step> plan(boolean quick) {
        List<String> rearmSizes = quick ? List.of("1024", "524288") : List.of("1024", "65536", "524288", "1048576");
        List<Step> steps = new ArrayList<>();
        List<String> delays = List.of("2000", "30000");
        // One step per delay: each stays under 20 minutes at full settings.
        for (String delay : delays) {
            steps.add(new Step(
                    "rearm-" + delay,
                    "RearmBenchmark.rearm",
                    params(
                            "contender",
                            ALL,
                            "pending",
                            rearmSizes,
                            "delayMs",
                            List.of(delay),
                            "order",
                            List.of("random"))));
        }
        if (quick) {
            // The 1M / 1k target concerns ours only: the other sizes of ours still run in a quick run.
            steps.add(new Step(
                    "rearm-ours-sizes",
                    "RearmBenchmark.rearm",
                    params(
                            "contender",
                            List.of(Contender.OURS.id),
                            "pending",
                            List.of("65536", "1048576"),
                            "delayMs",
                            delays,
                            "order",
                            List.of("random"))));
        }
        steps.add(new Step(
                "rearm-fixed-orders",
                "RearmBenchmark.rearm",
                params(
                        "contender",
                        ALL,
                        "pending",
                        List.of("524288"),
                        "delayMs",
                        delays,
                        "order",
                        List.of("fixed-permutation", "creation"))));
        steps.add(new Step(
                "rearm-breakdown", "RearmBreakdownBenchmark.*", 4, params("pending", List.of("1024", "524288"))));
        steps.add(new Step(
                "schedule-cancel",
                "ScheduleCancelBenchmark.scheduleThenCancel",
                params("contender", ALL, "pending", quick ? List.of("524288") : List.of("1024", "524288"))));
        steps.add(new Step(
                "expire-owner",
                "ExpiryBenchmark.expire",
                params("contender", OWNER_THREAD, "spreadTicks", List.of("64", "4096"))));
        // Threaded timers run in real time: 4096 ticks would be 4.3 s of waiting per invocation.
        steps.add(new Step(
                "expire-threaded",
                "ExpiryBenchmark.expire",
                params("contender", THREADED, "spreadTicks", List.of("64"))));
        steps.add(new Step("idle-advance", "IdleAdvanceBenchmark.idleAdvance", params("contender", OWNER_THREAD)));
        steps.add(new Step("burst", "BurstBenchmark.burst", params("contender", ALL)));
        steps.add(new Step(
                "burst-punctual",
                "PunctualBurstBenchmark.*",
                2,
                params("contender", List.of(Contender.OURS.id, Contender.NETTY_EVENTLOOP.id))));
        steps.add(new Step(
                "handler",
                "HandlerReadBatchBenchmark.readBatch",
                params(
                        "handler",
                        List.of("netty", "wheel", "none"),
                        "channels",
                        quick ? List.of("1", "524288") : List.of("1", "1024", "65536", "524288"))));
        steps.add(new Step(
                "ratelimit",
                "SharedRateLimitBenchmark.tryAcquire",
                params("mode", List.of("local", "cluster", "naive", "bucket4j"))));
        return steps;
    }

    private static Map<String, List<String>> params(Object... namesAndValues) {
        Map<String, List<String>> params = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            @SuppressWarnings("unchecked")
            List<String> values = (List<String>) namesAndValues[i + 1];
            params.put((String) namesAndValues[i], values);
        }
        return params;
    }

    @Override
    public Integer call() throws IOException, RunnerException, InterruptedException {
        List<Step> steps = plan(quick).stream().filter(s -> selected(s.name())).toList();
        boolean runMemory = selected("memory");
        if (list) {
            steps.forEach(s -> System.out.println(
                    s.name() + ": " + s.benchmark() + " " + s.params() + " (" + s.combinations() + " combinations)"));
            System.out.println("memory: " + (runMemory ? String.join(", ", MemoryFootprint.CONTENDERS) : "skipped"));
            return 0;
        }
        Files.createDirectories(out);
        String when = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();

        List<RunResult> results = new ArrayList<>();
        int expected = 0;
        for (Step step : steps) {
            expected += step.combinations();
            results.addAll(run(step));
        }
        List<MemoryFootprint.Measurement> memory = runMemory ? measureMemory() : List.of();
        double loadAfter = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();

        try (PrintStream json =
                new PrintStream(Files.newOutputStream(out.resolve("results.json")), true, StandardCharsets.UTF_8)) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, json).writeOut(results);
        }
        Files.writeString(
                out.resolve("memory.txt"),
                memory.stream()
                        .map(MemoryFootprint.Measurement::line)
                        .collect(Collectors.joining(
                                "\n", "# contender timers heapBytesPerTimer jolBytesPerTimer\n", "\n")));
        List<ResultRow> rows = results.stream().map(ResultRow::of).toList();
        String markdown = SuiteReport.render(rows, memory, runInfo(when, loadBefore, loadAfter));
        if (results.size() < expected) {
            markdown += "\n**Incomplete run: " + results.size() + " of " + expected
                    + " benchmark combinations produced a result; see the JMH output for the failures.**\n";
        }
        Files.writeString(out.resolve("summary.md"), markdown);
        System.out.println("Wrote " + out.resolve("results.json") + ", " + out.resolve("memory.txt") + " and "
                + out.resolve("summary.md"));
        if (results.size() < expected) {
            System.err.println(
                    "Only " + results.size() + " of " + expected + " benchmark combinations produced a result.");
            return 1;
        }
        return 0;
    }

    private boolean selected(String stepName) {
        return only == null || only.matcher(stepName).find();
    }

    private Collection<RunResult> run(Step step) throws RunnerException {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include("^io\\.wheelbeat\\.bench\\."
                        + step.benchmark().replace(".", "\\.").replace("\\.*", "\\..*") + "$")
                .jvmArgsAppend(FORK_JVM_ARGS.toArray(String[]::new))
                .addProfiler(GCProfiler.class)
                .addProfiler(ThreadCpuProfiler.class)
                .shouldFailOnError(false);
        iterations(options);
        step.params().forEach((name, values) -> options.param(name, values.toArray(String[]::new)));
        return new Runner(options.build()).run();
    }

    private void iterations(ChainedOptionsBuilder options) {
        if (quick) {
            options.forks(1)
                    .warmupIterations(2)
                    .warmupTime(TimeValue.milliseconds(500))
                    .measurementIterations(3)
                    .measurementTime(TimeValue.milliseconds(500));
        } else {
            options.forks(2)
                    .warmupIterations(3)
                    .warmupTime(TimeValue.seconds(1))
                    .measurementIterations(5)
                    .measurementTime(TimeValue.seconds(1));
        }
    }

    private String iterationsText() {
        return quick
                ? "1 fork, 2 x 500 ms warm-up, 3 x 500 ms measurement (--quick)"
                : "2 forks, 3 x 1 s warm-up, 5 x 1 s measurement";
    }

    private List<MemoryFootprint.Measurement> measureMemory() throws IOException, InterruptedException {
        List<MemoryFootprint.Measurement> measurements = new ArrayList<>();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int timers : new int[] {524288, 1048576}) {
            for (String contender : MemoryFootprint.CONTENDERS) {
                Process process = new ProcessBuilder(
                                java,
                                "-XX:+UseSerialGC",
                                "-Xmx2g",
                                "-cp",
                                System.getProperty("java.class.path"),
                                MemoryFootprint.class.getName(),
                                contender,
                                Integer.toString(timers))
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0) {
                    process.destroyForcibly();
                    System.err.println("memory measurement of " + contender + " failed: " + output);
                    continue;
                }
                MemoryFootprint.Measurement m = MemoryFootprint.Measurement.parse(output.lines()
                        .filter(l -> l.startsWith(contender + " "))
                        .findFirst()
                        .orElse(output));
                System.out.println("memory: " + m.line());
                measurements.add(m);
            }
        }
        return measurements;
    }

    private SuiteReport.RunInfo runInfo(String when, double loadBefore, double loadAfter) {
        String command = "java -jar performance/benchmarks/target/benchmarks.jar" + (quick ? " --quick" : "")
                + " --out " + out + (only == null ? "" : " --only '" + only + "'");
        String machine = Runtime.getRuntime().availableProcessors() + " cores (" + cpuModel() + "), "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", "
                + ManagementFactory.getOperatingSystemMXBean().getArch();
        String jdk = System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
        String gc = ManagementFactory.getGarbageCollectorMXBeans().stream()
                        .map(GarbageCollectorMXBean::getName)
                        .collect(Collectors.joining(" + "))
                + " (the JVM's default here)";
        String load = String.format(Locale.ROOT, "%.2f / %.2f", loadBefore, loadAfter);
        return new SuiteReport.RunInfo(
                quick ? "wheelbeat benchmarks: quick run" : "wheelbeat benchmarks: full run",
                command,
                when,
                machine,
                jdk,
                gc,
                String.join(" ", FORK_JVM_ARGS),
                iterationsText(),
                load);
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                    .filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse("unknown CPU");
        } catch (IOException | RuntimeException e) {
            return "unknown CPU";
        }
    }
}
