package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Impossible options fail at once, with exit code 2 and a message naming the problem, before
 * any work starts: in particular the report directory is not even created.
 */
class BadInputTest {

    @TempDir
    Path tmp;

    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        picocli.CommandLine cl = LoadTest.commandLine();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(new StringWriter(), true));
        List<String> all = new ArrayList<>(List.of(args));
        if (!all.contains("--report-dir")) {
            all.add("--report-dir");
            all.add(reportDir().toString());
        }
        all.add("--in-process");
        return cl.execute(all.toArray(String[]::new));
    }

    private Path reportDir() {
        return tmp.resolve("report");
    }

    private void assertRejected(int exit, String... fragments) {
        assertEquals(LoadTest.EXIT_BAD_INPUT, exit, err.toString());
        for (String fragment : fragments) {
            assertTrue(err.toString().contains(fragment), "expected '" + fragment + "' in: " + err);
        }
        assertFalse(Files.exists(reportDir()), "no work may start, not even the report directory");
    }

    @Test
    void negativeOpenRateIsRejected() {
        assertRejected(run("--idle-handler", "netty", "--open-rate", "-5"), "--open-rate must be positive");
    }

    @Test
    void anUnknownProtocolIsRejected() {
        assertRejected(run("--protocol", "mqtt"), "unknown protocol 'mqtt' (expected frames or websocket)");
    }

    @Test
    void anUnknownEventLoopIsRejected() {
        assertRejected(run("--event-loop", "heap"), "unknown event loop 'heap' (expected netty or wheel)");
    }

    @Test
    void comparedLoopGroupsTakeOneIdleHandlerBesideTheBaseline() {
        assertRejected(
                run("--event-loop", "netty,wheel", "--idle-handler", "wheel,netty"),
                "compares the loop groups with one idle handler on both");
        assertRejected(
                run("--event-loop", "netty,wheel", "--idle-handler", "none,netty"),
                "compares the loop groups with one idle handler on both");
    }

    @Test
    void zeroConnectionsAreRejected() {
        assertRejected(run("--idle-handler", "netty", "--connections", "0"), "--connections must be at least 1");
    }

    @Test
    void moreTcpConnectionsThanTheOpenFileLimitAllowsAreRejected() {
        Preflight.Machine machine = Preflight.Machine.current(List.of());
        int tooMany = machine.maxTcpConnections() + 1;
        assertRejected(
                run("--idle-handler", "netty", "--transport", "tcp", "--connections", Integer.toString(tooMany)),
                "open-file limit is " + machine.maxFileDescriptors(),
                "--transport local");
    }

    @Test
    void moreConnectionsThanTheHeapHoldsAreRejected() {
        assertRejected(run("--idle-handler", "netty", "--connections", "100000000"), "MiB of heap", "-Xmx");
    }

    @Test
    void readerIdleNoLongerThanTheLongestHeartbeatGapIsRejected() {
        assertRejected(
                run("--idle-handler", "netty", "--heartbeat", "4s", "--jitter", "0.5", "--reader-idle", "6s"),
                "--reader-idle 6 s is not longer than the longest heartbeat gap 6 s");
    }

    @Test
    void jitterOutsideItsRangeIsRejected() {
        assertRejected(run("--idle-handler", "netty", "--jitter", "1.5"), "--jitter must be between 0 and 0.9");
    }

    @Test
    void silentFractionAboveOneIsRejected() {
        assertRejected(run("--idle-handler", "netty", "--silent-fraction", "2"), "--silent-fraction");
    }

    @Test
    void negativeToleranceIsRejected() {
        assertRejected(run("--idle-handler", "netty", "--tolerance", "-1s"), "--tolerance must not be negative");
    }

    @Test
    void durationWithoutUnitIsRejected() {
        assertRejected(run("--idle-handler", "netty", "--reader-idle", "15"), "is not a duration");
    }

    @Test
    void unknownIdleHandlerIsRejected() {
        assertRejected(run("--idle-handler", "hashed"), "unknown idle handler 'hashed'");
    }

    @Test
    void sameIdleHandlerTwiceIsRejected() {
        assertRejected(run("--idle-handler", "netty,netty"), "lists a handler twice");
    }

    @Test
    void connectionsTogetherWithScalingAreRejected() {
        assertRejected(
                run("--idle-handler", "netty", "--scaling", "--connections", "1000"),
                "--connections and --scaling exclude each other");
    }

    @Test
    void reportDirectoryThatCannotBeWrittenIsRejected() throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "not a directory");
        int exit = run(
                "--idle-handler",
                "netty",
                "--report-dir",
                file.resolve("report").toString());
        assertEquals(LoadTest.EXIT_BAD_INPUT, exit, err.toString());
        assertTrue(err.toString().contains("cannot be written"), err.toString());
    }
}
