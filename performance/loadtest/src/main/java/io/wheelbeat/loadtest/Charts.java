package io.wheelbeat.loadtest;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.Paint;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.zip.DataFormatException;
import javax.imageio.ImageIO;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.ScatterRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.statistics.DefaultMultiValueCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The report's PNG charts, drawn headless with JFreeChart: the costs the verdict weighs side by
 * side (idle CPU per message, loop tasks per second, GC pauses), each handler's run over time
 * (open connections, heap, loop tasks per second, idle events, GC pauses) on a shared time axis,
 * the lateness distribution of each handler, heap per connection against connections, what the
 * idle machinery adds per connection, and (with several sizes) server CPU per message against
 * connections. Charts of one size show the largest size of the session.
 */
final class Charts {

    static final String LATENESS = "lateness.png";
    static final String HEAP = "heap-per-connection.png";
    static final String IDLE_MACHINERY = "idle-machinery-bytes.png";
    static final String CPU = "server-cpu-per-message.png";
    static final String COSTS = "costs.png";
    static final String TIMELINE = "timeline.png";
    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;
    /** Lateness below this is drawn at it: a log axis has no zero. */
    private static final double LATENESS_FLOOR_MS = 0.001;

    private static final int PANEL_WIDTH = 420;
    private static final int TIMELINE_HEIGHT = 1500;
    /** One colour per handler, the same in every chart: wheel, netty, none. */
    private static final Map<String, Color> HANDLER_COLORS = Map.of(
            IdleHandlerKind.WHEEL.id(), new Color(0x1f77b4),
            IdleHandlerKind.NETTY.id(), new Color(0xd62728),
            IdleHandlerKind.NONE.id(), new Color(0x7f7f7f));

    private final List<RunResult> runs;
    private final int largest;

    Charts(List<RunResult> runs) {
        this.runs = runs;
        this.largest =
                runs.stream().mapToInt(RunResult::connectionsRequested).max().orElse(0);
    }

    /** Writes the charts that have data into {@code dir}; returns their file names. */
    List<String> write(Path dir) throws IOException {
        List<String> written = new ArrayList<>();
        if (saveSideBySide(costs(), dir, COSTS)) {
            written.add(COSTS);
        }
        if (save(timeline(), dir, TIMELINE, WIDTH, TIMELINE_HEIGHT)) {
            written.add(TIMELINE);
        }
        if (save(lateness(), dir, LATENESS)) {
            written.add(LATENESS);
        }
        if (save(heapPerConnection(), dir, HEAP)) {
            written.add(HEAP);
        }
        if (save(idleMachineryBytes(), dir, IDLE_MACHINERY)) {
            written.add(IDLE_MACHINERY);
        }
        if (runs.stream().map(RunResult::connectionsRequested).distinct().count() > 1
                && save(cpuPerMessage(), dir, CPU)) {
            written.add(CPU);
        }
        return written;
    }

    private static boolean save(JFreeChart chart, Path dir, String name) throws IOException {
        return save(chart, dir, name, WIDTH, HEIGHT);
    }

    private static boolean save(JFreeChart chart, Path dir, String name, int width, int height) throws IOException {
        if (chart == null) {
            return false;
        }
        ChartUtils.saveChartAsPNG(dir.resolve(name).toFile(), chart, width, height);
        return true;
    }

    /** Draws the charts next to each other in one PNG. */
    private static boolean saveSideBySide(List<JFreeChart> charts, Path dir, String name) throws IOException {
        if (charts.isEmpty()) {
            return false;
        }
        BufferedImage image = new BufferedImage(PANEL_WIDTH * charts.size(), HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            for (int i = 0; i < charts.size(); i++) {
                charts.get(i).draw(g, new Rectangle2D.Double(i * PANEL_WIDTH, 0, PANEL_WIDTH, HEIGHT));
            }
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", dir.resolve(name).toFile());
        return true;
    }

    /**
     * Costs of each arm, one panel each, one bar per arm: the median of its rounds,
     * each run a dot on it.
     */
    /** One panel of the costs chart: a per-run value. */
    private record Panel(String name, String unit, java.util.function.Function<RunResult, Double> value) {}

    private static double median(List<Double> values) {
        double[] sorted =
                values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private List<JFreeChart> costs() {
        List<RunResult> sized =
                runs.stream().filter(r -> r.connectionsRequested() == largest).toList();
        List<Panel> panels = List.of(
                new Panel(
                        "idle machinery CPU per message, JFR samples",
                        "ns",
                        r -> r.steady().attribution().idleNanosPerMessage()),
                new Panel(
                        "server-loop CPU per message, steady",
                        "ns",
                        r -> r.steady().loopNanosPerMessage()),
                new Panel(
                        "scheduled tasks on the server loops",
                        "/s",
                        r -> r.timers().loopScheduledTasksPerSecond()),
                new Panel("loop lag, steady, worst", "ms", r -> r.loopLag().steadyMaxMs()));
        List<JFreeChart> charts = new ArrayList<>();
        for (Panel m : panels) {
            DefaultCategoryDataset medians = new DefaultCategoryDataset();
            DefaultMultiValueCategoryDataset each = new DefaultMultiValueCategoryDataset();
            List<String> handlers = new ArrayList<>();
            for (String handler : handlers()) {
                List<RunResult> mine =
                        sized.stream().filter(r -> r.handler().equals(handler)).toList();
                if (mine.isEmpty()) {
                    continue;
                }
                List<Double> values = mine.stream().map(m.value()).toList();
                medians.addValue(median(values), "median", handler);
                each.add(values, "each run", handler);
                handlers.add(handler);
            }
            if (handlers.isEmpty()) {
                continue;
            }
            JFreeChart chart = ChartFactory.createBarChart(
                    m.name(), null, m.unit(), medians, PlotOrientation.VERTICAL, false, false, false);
            chart.getTitle().setFont(chart.getTitle().getFont().deriveFont(13f));
            CategoryPlot plot = chart.getCategoryPlot();
            BarRenderer bars = new BarRenderer() {
                private static final long serialVersionUID = 1L;

                @Override
                public Paint getItemPaint(int row, int column) {
                    return HANDLER_COLORS.getOrDefault(handlers.get(column), Color.DARK_GRAY);
                }
            };
            bars.setBarPainter(new StandardBarPainter());
            bars.setShadowVisible(false);
            bars.setMaximumBarWidth(0.25);
            plot.setRenderer(bars);
            plot.setDataset(1, each);
            ScatterRenderer dots = new ScatterRenderer();
            dots.setSeriesPaint(0, Color.BLACK);
            dots.setSeriesShape(0, new Ellipse2D.Double(-3, -3, 6, 6));
            plot.setRenderer(1, dots);
            plot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
            plot.setBackgroundPaint(Color.WHITE);
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
            ((NumberAxis) plot.getRangeAxis()).setAutoRangeIncludesZero(true);
            charts.add(chart);
        }
        return charts;
    }

    /**
     * Each arm in the first round at the largest size over time (the arms side by side, one JVM),
     * from its progress samples and the GC pauses, on one time axis: open connections, heap in
     * use, loop tasks per second, idle events, timer expirations per second, worst loop lag, GC
     * pauses (the load test's own heap readings left out).
     */
    private JFreeChart timeline() {
        List<RunResult> firsts = new ArrayList<>();
        for (String handler : handlers()) {
            runs.stream()
                    .filter(r -> r.handler().equals(handler) && r.connectionsRequested() == largest)
                    .filter(r -> r.timeline() != null && !r.timeline().isEmpty())
                    .findFirst()
                    .ifPresent(firsts::add);
        }
        if (firsts.isEmpty()) {
            return null;
        }
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("seconds since the run started"));
        plot.setGap(12);
        XYPlot open = panel("open connections", firsts, RunResult.Sample::open, true);
        for (int i = 0; i < firsts.size(); i++) {
            open.getRenderer().setSeriesVisibleInLegend(i, true);
        }
        plot.add(open);
        plot.add(panel("heap in use (MiB)", firsts, RunResult.Sample::heapUsedMiB, true));
        plot.add(panel("server-loop scheduled tasks / s", firsts, RunResult.Sample::loopScheduledTasksPerSecond, true));
        plot.add(panel("idle events so far", firsts, RunResult.Sample::idleEvents, true));
        plot.add(panel("timer expirations / s", firsts, RunResult.Sample::expirationsPerSecond, true));
        plot.add(panel("worst loop lag (ms)", firsts, RunResult.Sample::maxLoopLagMs, true));
        XYSeriesCollection pauses = new XYSeriesCollection();
        for (RunResult run : firsts) {
            XYSeries series = new XYSeries(run.handler(), true, true);
            run.gc().pauses().stream().filter(p -> !p.heapReading()).forEach(p -> series.add(p.atSeconds(), p.ms()));
            pauses.addSeries(series);
        }
        plot.add(panel("GC pause (ms)", pauses, firsts, false));
        JFreeChart chart = new JFreeChart(
                String.format(
                        Locale.ROOT,
                        "Each handler's run over time, %,d connections%s",
                        largest,
                        runs.stream().anyMatch(r -> r.round() > 1) ? " (first round)" : ""),
                JFreeChart.DEFAULT_TITLE_FONT,
                plot,
                true);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }

    private static XYPlot panel(
            String label, List<RunResult> firsts, ToDoubleFunction<RunResult.Sample> value, boolean lines) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (RunResult run : firsts) {
            XYSeries series = new XYSeries(run.handler(), true, true);
            run.timeline().forEach(sample -> series.add(sample.atSeconds(), value.applyAsDouble(sample)));
            data.addSeries(series);
        }
        return panel(label, data, firsts, lines);
    }

    private static XYPlot panel(String label, XYSeriesCollection data, List<RunResult> firsts, boolean lines) {
        NumberAxis axis = new NumberAxis(label);
        axis.setAutoRangeIncludesZero(true);
        axis.setLabelFont(axis.getLabelFont().deriveFont(11f));
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(lines, !lines);
        for (int i = 0; i < firsts.size(); i++) {
            renderer.setSeriesPaint(i, HANDLER_COLORS.getOrDefault(firsts.get(i).handler(), Color.DARK_GRAY));
            renderer.setSeriesStroke(i, new BasicStroke(2f));
            renderer.setSeriesShape(i, new Ellipse2D.Double(-3, -3, 6, 6));
            renderer.setSeriesVisibleInLegend(i, false);
        }
        XYPlot plot = new XYPlot(data, null, axis, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        return plot;
    }

    /** Lateness against percentile, the percentile axis in "nines" (x = 1 / (1 - p)). */
    private JFreeChart lateness() {
        XYSeriesCollection data = new XYSeriesCollection();
        for (RunResult run : runs) {
            if (!run.idle().applicable()
                    || run.idle().lateness().count() == 0
                    || run.connectionsRequested() != largest) {
                continue;
            }
            Histogram h = decode(run.idle().lateness().histogram());
            boolean repeated = runs.stream().anyMatch(r -> r.round() > 1);
            XYSeries series = new XYSeries(
                    run.handler() + (repeated ? ", round " + run.round() : "") + " (" + h.getTotalCount() + " events)",
                    false,
                    true);
            for (HistogramIterationValue v : h.percentiles(5)) {
                double percentile = v.getPercentileLevelIteratedTo();
                if (percentile >= 100) {
                    break;
                }
                series.add(100 / (100 - percentile), Math.max(LATENESS_FLOOR_MS, v.getValueIteratedTo() / 1e6));
            }
            series.add(h.getTotalCount(), Math.max(LATENESS_FLOOR_MS, h.getMaxValue() / 1e6));
            data.addSeries(series);
        }
        if (data.getSeriesCount() == 0) {
            return null;
        }
        JFreeChart chart = ChartFactory.createXYLineChart(
                "Idle-detection lateness, " + String.format(Locale.ROOT, "%,d", largest) + " connections",
                "percentile",
                "lateness (ms): fire time - true deadline",
                data,
                PlotOrientation.VERTICAL,
                true,
                false,
                false);
        XYPlot plot = chart.getXYPlot();
        plot.setDomainAxis(decades("percentile", new NinesFormat()));
        LogAxis ms = decades("lateness (ms): fire time - true deadline", new DecimalFormat("0.###"));
        ms.setSmallestValue(LATENESS_FLOOR_MS);
        plot.setRangeAxis(ms);
        style(plot, false);
        return chart;
    }

    /** A log axis with a labelled tick at every power of ten. */
    private static LogAxis decades(String label, NumberFormat format) {
        LogAxis axis = new LogAxis(label);
        axis.setBase(10);
        axis.setTickUnit(new NumberTickUnit(1));
        axis.setMinorTickCount(9);
        axis.setMinorTickMarksVisible(true);
        axis.setNumberFormatOverride(format);
        return axis;
    }

    /** Live bytes per connection at every heap reading of every run, one series per handler. */
    private JFreeChart heapPerConnection() {
        XYSeriesCollection data = new XYSeriesCollection();
        for (String handler : handlers()) {
            XYSeries series = new XYSeries(handler, true, true);
            runs.stream()
                    .filter(r -> r.handler().equals(handler))
                    .forEach(r ->
                            r.heap().checkpoints().forEach(p -> series.add(p.connections(), p.bytesPerConnection())));
            data.addSeries(series);
        }
        return xyChart(
                "Heap per connection (live objects, class histogram)",
                "connections open",
                "bytes per connection",
                data);
    }

    /**
     * Each handler's heap per connection minus the baseline's, reading by reading: the k-th heap
     * reading of a run against the k-th of the baseline run of the same size.
     */
    private JFreeChart idleMachineryBytes() {
        XYSeriesCollection data = new XYSeriesCollection();
        for (String handler : handlers()) {
            XYSeries series = new XYSeries(handler, true, true);
            for (RunResult run : runs) {
                if (!run.handler().equals(handler) || !run.idle().applicable()) {
                    continue;
                }
                VerdictTable.find(runs, run.connectionsRequested(), run.round(), VerdictTable.BASELINE)
                        .ifPresent(base -> {
                            List<RunResult.HeapPoint> mine = run.heap().checkpoints();
                            List<RunResult.HeapPoint> theirs = base.heap().checkpoints();
                            for (int k = 0; k < Math.min(mine.size(), theirs.size()); k++) {
                                series.add(
                                        mine.get(k).connections(),
                                        mine.get(k).bytesPerConnection()
                                                - theirs.get(k).bytesPerConnection());
                            }
                        });
            }
            if (series.getItemCount() > 0) {
                data.addSeries(series);
            }
        }
        if (data.getSeriesCount() == 0) {
            return null;
        }
        return xyChart(
                "Idle machinery per connection (handler run minus run without handler)",
                "connections open",
                "bytes per connection",
                data);
    }

    private JFreeChart cpuPerMessage() {
        XYSeriesCollection data = new XYSeriesCollection();
        for (String handler : handlers()) {
            XYSeries series = new XYSeries(handler, true, true);
            runs.stream()
                    .filter(r -> r.handler().equals(handler))
                    .forEach(r -> series.add(r.connectionsRequested(), r.cpu().serverLoopNanosPerMessage()));
            data.addSeries(series);
        }
        return xyChart("Server event-loop CPU per message", "connections", "nanoseconds per message", data);
    }

    private List<String> handlers() {
        return runs.stream().map(RunResult::handler).distinct().toList();
    }

    private static JFreeChart xyChart(String title, String x, String y, XYSeriesCollection data) {
        JFreeChart chart =
                ChartFactory.createXYLineChart(title, x, y, data, PlotOrientation.VERTICAL, true, false, false);
        NumberAxis range = (NumberAxis) chart.getXYPlot().getRangeAxis();
        range.setAutoRangeIncludesZero(true);
        style(chart.getXYPlot(), true);
        return chart;
    }

    private static void style(XYPlot plot, boolean shapes) {
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, shapes);
        for (int i = 0; i < plot.getDataset().getSeriesCount(); i++) {
            String key = plot.getDataset().getSeriesKey(i).toString();
            renderer.setSeriesPaint(i, HANDLER_COLORS.getOrDefault(key.split("[ ,]")[0], Color.DARK_GRAY));
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    }

    static Histogram decode(String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(
                    ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("not an encoded histogram", e);
        }
    }

    /** Labels x = 1 / (1 - p) as the percentile p: 10 -> 90%, 1000 -> 99.9%. */
    private static final class NinesFormat extends NumberFormat {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(double x, StringBuffer to, FieldPosition pos) {
            double percentile = 100 - 100 / x;
            return to.append(String.format(
                    Locale.ROOT,
                    percentile == Math.rint(percentile) ? "%.0f%%" : "%s%%",
                    percentile == Math.rint(percentile) ? percentile : stripZeros(percentile)));
        }

        @Override
        public StringBuffer format(long x, StringBuffer to, FieldPosition pos) {
            return format((double) x, to, pos);
        }

        @Override
        public Number parse(String source, ParsePosition pos) {
            throw new UnsupportedOperationException("labels only");
        }

        private static String stripZeros(double v) {
            return new java.math.BigDecimal(String.format(Locale.ROOT, "%.6f", v))
                    .stripTrailingZeros()
                    .toPlainString();
        }
    }
}
