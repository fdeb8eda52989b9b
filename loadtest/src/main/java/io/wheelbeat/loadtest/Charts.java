package io.wheelbeat.loadtest;

import java.awt.BasicStroke;
import java.awt.Color;
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
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The report's PNG charts, drawn headless with JFreeChart: the lateness distribution of each
 * handler, heap per connection against connections, what the idle machinery adds per connection,
 * and (with several sizes) server CPU per message against connections.
 */
final class Charts {

    static final String LATENESS = "lateness.png";
    static final String HEAP = "heap-per-connection.png";
    static final String IDLE_MACHINERY = "idle-machinery-bytes.png";
    static final String CPU = "server-cpu-per-message.png";
    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;
    /** Lateness below this is drawn at it: a log axis has no zero. */
    private static final double LATENESS_FLOOR_MS = 0.001;

    private final List<RunResult> runs;
    private final List<Report.IdleMachinery> idleMachinery;

    Charts(List<RunResult> runs, List<Report.IdleMachinery> idleMachinery) {
        this.runs = runs;
        this.idleMachinery = idleMachinery;
    }

    /** Writes the charts that have data into {@code dir}; returns their file names. */
    List<String> write(Path dir) throws IOException {
        List<String> written = new ArrayList<>();
        if (save(lateness(), dir, LATENESS)) {
            written.add(LATENESS);
        }
        if (save(heapPerConnection(), dir, HEAP)) {
            written.add(HEAP);
        }
        if (save(idleMachineryBytes(), dir, IDLE_MACHINERY)) {
            written.add(IDLE_MACHINERY);
        }
        if (runs.stream().map(RunResult::connectionsRequested).distinct().count() > 1 && save(cpuPerMessage(), dir, CPU)) {
            written.add(CPU);
        }
        return written;
    }

    private static boolean save(JFreeChart chart, Path dir, String name) throws IOException {
        if (chart == null) {
            return false;
        }
        ChartUtils.saveChartAsPNG(dir.resolve(name).toFile(), chart, WIDTH, HEIGHT);
        return true;
    }

    /** Lateness against percentile, the percentile axis in "nines" (x = 1 / (1 - p)). */
    private JFreeChart lateness() {
        XYSeriesCollection data = new XYSeriesCollection();
        int largest = runs.stream().mapToInt(RunResult::connectionsRequested).max().orElse(0);
        for (RunResult run : runs) {
            if (!run.idle().applicable() || run.idle().lateness().count() == 0 || run.connectionsRequested() != largest) {
                continue;
            }
            Histogram h = decode(run.idle().lateness().histogram());
            XYSeries series = new XYSeries(run.handler() + " (" + h.getTotalCount() + " events)", false, true);
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
                "percentile", "lateness (ms): fire time - true deadline", data, PlotOrientation.VERTICAL,
                true, false, false);
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

    /** Heap per connection at every heap reading of every run, one series per handler. */
    private JFreeChart heapPerConnection() {
        XYSeriesCollection data = new XYSeriesCollection();
        for (String handler : handlers()) {
            XYSeries series = new XYSeries(handler, true, true);
            runs.stream().filter(r -> r.handler().equals(handler))
                    .forEach(r -> r.heap().checkpoints().forEach(p -> series.add(p.connections(), p.bytesPerConnection())));
            data.addSeries(series);
        }
        return xyChart("Heap per connection (live, after full GC)", "connections open",
                "bytes per connection", data);
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
                Report.baselineOf(runs, run).ifPresent(base -> {
                    List<RunResult.HeapPoint> mine = run.heap().checkpoints();
                    List<RunResult.HeapPoint> theirs = base.heap().checkpoints();
                    for (int k = 0; k < Math.min(mine.size(), theirs.size()); k++) {
                        series.add(mine.get(k).connections(),
                                mine.get(k).bytesPerConnection() - theirs.get(k).bytesPerConnection());
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
        return xyChart("Idle machinery per connection (handler run minus run without handler)",
                "connections open", "bytes per connection", data);
    }

    private JFreeChart cpuPerMessage() {
        XYSeriesCollection data = new XYSeriesCollection();
        for (String handler : handlers()) {
            XYSeries series = new XYSeries(handler, true, true);
            runs.stream().filter(r -> r.handler().equals(handler))
                    .forEach(r -> series.add(r.connectionsRequested(), r.cpu().serverLoopNanosPerMessage()));
            data.addSeries(series);
        }
        return xyChart("Server event-loop CPU per message", "connections", "nanoseconds per message", data);
    }

    private List<String> handlers() {
        return runs.stream().map(RunResult::handler).distinct().toList();
    }

    private static JFreeChart xyChart(String title, String x, String y, XYSeriesCollection data) {
        JFreeChart chart = ChartFactory.createXYLineChart(title, x, y, data, PlotOrientation.VERTICAL,
                true, false, false);
        NumberAxis range = (NumberAxis) chart.getXYPlot().getRangeAxis();
        range.setAutoRangeIncludesZero(true);
        style(chart.getXYPlot(), true);
        return chart;
    }

    private static void style(XYPlot plot, boolean shapes) {
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, shapes);
        Color[] colors = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x7f7f7f), new Color(0x2ca02c)};
        for (int i = 0; i < plot.getDataset().getSeriesCount(); i++) {
            renderer.setSeriesPaint(i, colors[i % colors.length]);
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    }

    static Histogram decode(String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
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
            return to.append(String.format(Locale.ROOT, percentile == Math.rint(percentile) ? "%.0f%%" : "%s%%",
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
            return new java.math.BigDecimal(String.format(Locale.ROOT, "%.6f", v)).stripTrailingZeros().toPlainString();
        }
    }
}
