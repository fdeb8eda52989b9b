package io.wheelbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The verdict of one size: a row per measure, ours ({@code wheel}) against theirs
 * ({@code netty}), each side's median and min-max over its runs, the ratio of the medians and who
 * won ({@link Verdict}). Where the session ran the baseline, bytes and CPU are the idle
 * machinery's own (a run minus the baseline run of the same round); otherwise whole-run figures.
 * Built from the results alone: no clock, no I/O.
 *
 * <p>Immutable.
 */
final class VerdictTable {

    static final String OURS = IdleHandlerKind.WHEEL.id();
    static final String THEIRS = IdleHandlerKind.NETTY.id();

    /** A run's value of a measure; {@code baseline} is the run without a handler of the same size and round. */
    interface Value {
        double of(RunResult run, RunResult baseline);
    }

    /** One measure: a name, a unit, which way it improves and how to read it off a run. */
    record Measure(String name, String unit, Verdict.Better better, boolean needsBaseline, Value value) {
    }

    static final Measure WRONG_IDLE_EVENTS = new Measure("missed + false idle events", "", Verdict.Better.LOWER, false,
            (r, b) -> r.idle().missed() + r.idle().falseIdle());
    static final Measure IDLE_MACHINERY_BYTES = new Measure("idle machinery per connection, minus none", "B",
            Verdict.Better.LOWER, true, (r, b) -> r.heap().bytesPerConnection() - b.heap().bytesPerConnection());
    static final Measure HEAP_BYTES = new Measure("heap per connection", "B", Verdict.Better.LOWER, false,
            (r, b) -> r.heap().bytesPerConnection());
    static final Measure IDLE_MACHINERY_CPU = new Measure("idle machinery CPU per message, minus none", "ns",
            Verdict.Better.LOWER, true,
            (r, b) -> r.cpu().serverLoopNanosPerMessage() - b.cpu().serverLoopNanosPerMessage());
    static final Measure LOOP_CPU = new Measure("server-loop CPU per message", "ns", Verdict.Better.LOWER, false,
            (r, b) -> r.cpu().serverLoopNanosPerMessage());
    static final Measure LOOP_TASKS = new Measure("scheduled tasks on the server loops", "/s", Verdict.Better.LOWER,
            false, (r, b) -> r.timers().loopScheduledTasksPerSecond());
    static final Measure LATENESS_P50 = new Measure("lateness p50", "ms", Verdict.Better.LOWER, false,
            (r, b) -> r.idle().lateness().p50Ms());
    static final Measure LATENESS_P99 = new Measure("lateness p99", "ms", Verdict.Better.LOWER, false,
            (r, b) -> r.idle().lateness().p99Ms());
    static final Measure LATENESS_P999 = new Measure("lateness p99.9", "ms", Verdict.Better.LOWER, false,
            (r, b) -> r.idle().lateness().p999Ms());
    static final Measure LATENESS_MAX = new Measure("lateness max", "ms", Verdict.Better.LOWER, false,
            (r, b) -> r.idle().lateness().maxMs());
    static final Measure GC_TOTAL = new Measure("GC pauses, total", "ms", Verdict.Better.LOWER, false,
            (r, b) -> r.gc().totalPauseMs());
    static final Measure GC_LONGEST = new Measure("GC pause, longest", "ms", Verdict.Better.LOWER, false,
            (r, b) -> r.gc().maxPauseMs());
    static final Measure LOOP_ALLOCATION = new Measure("server-loop allocation per message", "B",
            Verdict.Better.LOWER, false, (r, b) -> r.gc().serverLoopBytesPerMessage());
    static final Measure OPEN_RATE = new Measure("open rate", "connections/s", Verdict.Better.HIGHER, false,
            (r, b) -> r.openRatePerSecond());

    /** One measure's row. */
    record Row(Measure measure, Verdict.Spread ours, Verdict.Spread theirs, Verdict.Call call) {
    }

    private final int connections;
    private final List<Row> rows;
    /** The machine's 1-minute load average over the starts and ends of the runs compared. */
    private final Verdict.Spread load;
    private final int cores;

    private VerdictTable(int connections, List<Row> rows, Verdict.Spread load, int cores) {
        this.connections = connections;
        this.rows = List.copyOf(rows);
        this.load = load;
        this.cores = cores;
    }

    /**
     * The verdict of the runs of one size, or empty if they do not include both {@code wheel}
     * and {@code netty}.
     */
    static Optional<VerdictTable> of(int connections, List<RunResult> runs) {
        List<RunResult> ours = runsOf(runs, connections, OURS);
        List<RunResult> theirs = runsOf(runs, connections, THEIRS);
        if (ours.isEmpty() || theirs.isEmpty()) {
            return Optional.empty();
        }
        boolean baseline = ours.stream().allMatch(r -> baselineOf(runs, r).isPresent())
                && theirs.stream().allMatch(r -> baselineOf(runs, r).isPresent());
        List<Measure> measures = List.of(WRONG_IDLE_EVENTS, baseline ? IDLE_MACHINERY_BYTES : HEAP_BYTES,
                baseline ? IDLE_MACHINERY_CPU : LOOP_CPU, LOOP_TASKS, LATENESS_P50, LATENESS_P99, LATENESS_P999,
                LATENESS_MAX, GC_TOTAL, GC_LONGEST, LOOP_ALLOCATION, OPEN_RATE);
        List<Row> rows = new ArrayList<>();
        for (Measure m : measures) {
            Verdict.Spread o = spread(m, ours, runs);
            Verdict.Spread t = spread(m, theirs, runs);
            rows.add(new Row(m, o, t, Verdict.call(m.better(), o, t)));
        }
        List<Double> loads = runs.stream().filter(r -> r.connectionsRequested() == connections)
                .flatMap(r -> Stream.of(r.machine().loadAverageAtStart(), r.machine().loadAverageAtEnd()))
                .toList();
        return Optional.of(new VerdictTable(connections, rows, Verdict.Spread.of(loads), ours.get(0).machine().cores()));
    }

    /** The run without an idle handler of the same size and round as {@code run}, if any. */
    static Optional<RunResult> baselineOf(List<RunResult> runs, RunResult run) {
        return runs.stream()
                .filter(r -> !r.idle().applicable() && r.connectionsRequested() == run.connectionsRequested()
                        && r.round() == run.round())
                .findFirst();
    }

    private static List<RunResult> runsOf(List<RunResult> runs, int connections, String handler) {
        return runs.stream().filter(r -> r.handler().equals(handler) && r.connectionsRequested() == connections)
                .toList();
    }

    private static Verdict.Spread spread(Measure m, List<RunResult> side, List<RunResult> all) {
        return Verdict.Spread.of(side.stream()
                .map(r -> m.value().of(r, m.needsBaseline() ? baselineOf(all, r).orElseThrow() : null))
                .toList());
    }

    List<Row> rows() {
        return rows;
    }

    int connections() {
        return connections;
    }

    /** The table as Markdown, with a heading line saying what it compares. */
    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append(heading()).append("\n\n");
        md.append("| measure | ").append(OURS).append(" | ").append(THEIRS).append(" | ").append(OURS).append(" ÷ ")
                .append(THEIRS).append(" | verdict |\n|---|---:|---:|---:|---|\n");
        for (Row row : rows) {
            md.append("| ").append(name(row)).append(" | ").append(cell(row.ours())).append(" | ")
                    .append(cell(row.theirs())).append(" | ").append(ratio(row.call())).append(" | ")
                    .append(row.call().outcome().markdown()).append(" |\n");
        }
        md.append('\n').append(footnote()).append('\n');
        return md.toString();
    }

    /** The table as aligned plain text, for the console. */
    String plain() {
        List<String[]> lines = new ArrayList<>();
        lines.add(new String[] {"measure", OURS, THEIRS, OURS + "/" + THEIRS, "verdict"});
        for (Row row : rows) {
            lines.add(new String[] {name(row), cell(row.ours()), cell(row.theirs()), ratio(row.call()),
                row.call().outcome().plain()});
        }
        int[] width = new int[5];
        for (String[] line : lines) {
            for (int i = 0; i < width.length; i++) {
                width[i] = Math.max(width[i], line[i].length());
            }
        }
        StringBuilder text = new StringBuilder(heading()).append('\n');
        for (String[] line : lines) {
            text.append(String.format(Locale.ROOT, "  %-" + width[0] + "s  %" + width[1] + "s  %" + width[2] + "s  %"
                    + width[3] + "s  %s%n", line[0], line[1], line[2], line[3], line[4]).stripTrailing()).append('\n');
        }
        return text.append(footnote()).append('\n').toString();
    }

    private String heading() {
        int runs = rows.get(0).ours().runs();
        return String.format(Locale.ROOT, "Verdict at %,d connections, %s against %s: %s", connections, OURS, THEIRS,
                runs == 1 ? "one run each"
                        : "median of " + runs + " runs each, min to max in brackets");
    }

    private String footnote() {
        boolean spreadKnown = rows.stream().allMatch(r -> r.call().spreadKnown());
        String calls = spreadKnown
                ? "A verdict is called only where the two ranges do not overlap; otherwise \"within noise\"."
                : "One run each: the spread between identical runs is unknown, so any row may be noise "
                        + "(--repeat 3 calls a verdict only where the ranges do not overlap).";
        if (load.min() < 0) {
            return calls;
        }
        return calls + String.format(Locale.ROOT, " Machine load (1-minute average) %.1f to %.1f on %d cores%s",
                load.min(), load.max(), cores, load.max() > cores
                        ? ": other work shared the CPU, so timing rows (CPU, lateness, pauses) are less certain."
                        : ".");
    }

    private static String name(Row row) {
        return row.measure().name() + (row.measure().unit().isEmpty() ? "" : " (" + row.measure().unit() + ")");
    }

    private static String cell(Verdict.Spread s) {
        return s.runs() == 1 || s.isPoint() ? number(s.median())
                : number(s.median()) + " [" + number(s.min()) + " to " + number(s.max()) + "]";
    }

    private static String ratio(Verdict.Call call) {
        return Double.isNaN(call.ratio()) ? "-" : String.format(Locale.ROOT, "%.2f", call.ratio());
    }

    /** Three significant figures or so, grouped thousands: 0.451, 5.09, 13.7, 2,450. */
    static String number(double v) {
        double a = Math.abs(v);
        String format = a >= 100 || v == Math.rint(v) ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, format, v);
    }
}
