package io.wheelbeat.loadtest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The TCP tier's client process: a {@link HeartbeatDriver} commanded line by line over standard
 * input by the server process ({@link RemoteLoadClient}); its status goes out as
 * {@code @}-prefixed lines on standard output, its logging on standard error.
 */
final class TcpClientProcess {

    /** System property that points the client's log at standard error (see logback.xml). */
    static final String LOG_TARGET_PROPERTY = "loadtest.log.target";

    static final String START = "START";
    static final String PAUSE = "PAUSE";
    static final String RESUME = "RESUME";
    static final String SILENCE = "SILENCE";
    static final String STATS = "STATS";
    static final String CLOSE = "CLOSE";
    static final String EXIT = "EXIT";

    private static final long STATUS_EVERY_MILLIS = 200;

    private TcpClientProcess() {}

    /** Runs until told to exit or its input ends; returns the exit code. */
    static int run(Settings settings, List<InetSocketAddress> servers) throws Exception {
        PrintStream out =
                new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        ScheduledExecutorService status = Executors.newSingleThreadScheduledExecutor();
        try (HeartbeatDriver driver = new HeartbeatDriver(settings, servers)) {
            status.scheduleAtFixedRate(
                    () -> out.println(
                            "@STATUS " + driver.opened() + " " + driver.failed() + " " + (driver.rampDone() ? 1 : 0)),
                    0,
                    STATUS_EVERY_MILLIS,
                    TimeUnit.MILLISECONDS);
            out.println("@READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                switch (line.trim()) {
                    case START:
                        driver.start();
                        break;
                    case PAUSE:
                        driver.pauseOpening();
                        out.println("@PAUSED " + driver.opened() + " " + driver.failed());
                        break;
                    case RESUME:
                        driver.resumeOpening();
                        break;
                    case SILENCE:
                        driver.beginSilence();
                        break;
                    case STATS:
                        LoadClient.ClientStats s = driver.stats();
                        out.println("@STATS " + s.heartbeatsSent() + " " + s.maxSenderLagNanos() + " "
                                + JvmStats.processCpuNanos());
                        break;
                    case CLOSE:
                        driver.closeConnections();
                        break;
                    case EXIT:
                        return 0;
                    default:
                        System.err.println("tcp client: unknown command '" + line + "'");
                        return 2;
                }
            }
            return 0;
        } finally {
            status.shutdownNow();
        }
    }
}
