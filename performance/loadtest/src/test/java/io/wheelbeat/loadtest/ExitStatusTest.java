package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The exit status from made-up results: wheelbeat's misses fail the command, a peer's do not,
 * an invalid session says so, and every non-zero status comes with one line saying why.
 */
class ExitStatusTest {

    private static final java.util.function.Predicate<RunResult> WHEEL =
            r -> r.handler().equals("wheel");

    @Test
    void cleanRunsExitZeroWithNoReason() {
        ExitStatus status =
                ExitStatus.of(List.of(run("wheel", 0, 0, 0), run("netty", 0, 0, 0), run("none", 0, 0, 0)), WHEEL);
        assertEquals(new ExitStatus(0, ""), status);
    }

    @Test
    void aPeersMissesAreNotAFailureOfTheCommand() {
        assertEquals(
                0,
                ExitStatus.of(List.of(run("wheel", 0, 0, 0), run("netty", 494, 12, 0)), WHEEL)
                        .code());
    }

    @Test
    void wheelbeatsMissesFailTheCommandAndTheLineSaysHowMany() {
        ExitStatus status = ExitStatus.of(List.of(run("wheel", 19_523, 0, 0), run("netty", 0, 0, 0)), WHEEL);
        assertEquals(ExitStatus.WHEELBEAT_MISSED, status.code());
        assertTrue(status.reason().contains("wheel missed 19,523 of 16,564 silenced connections"), status.reason());
        assertTrue(status.reason().startsWith("exit 3: "), status.reason());
        assertEquals(-1, status.reason().indexOf('\n'), "one line");
    }

    @Test
    void aPeerThatMissedBesideItIsNamedAsTheMachinesSign() {
        ExitStatus status = ExitStatus.of(List.of(run("wheel", 4, 0, 0), run("netty", 4, 0, 0)), WHEEL);
        assertEquals(ExitStatus.WHEELBEAT_MISSED, status.code());
        assertTrue(
                status.reason().contains("beside it netty missed 4 and reported 0 falsely: the machine stalled both"),
                status.reason());
        assertEquals(-1, status.reason().indexOf('\n'), "one line");
    }

    @Test
    void wheelbeatsFalseIdleEventsFailTheCommandToo() {
        ExitStatus status = ExitStatus.of(List.of(run("wheel", 0, 7, 0), run("netty", 0, 0, 0)), WHEEL);
        assertEquals(ExitStatus.WHEELBEAT_MISSED, status.code());
        assertTrue(status.reason().contains("reported 7 talking ones idle"), status.reason());
    }

    @Test
    void connectionsThatFailedToOpenVoidTheSessionWhicheverArmTheyBelongTo() {
        ExitStatus status = ExitStatus.of(List.of(run("wheel", 0, 0, 0), run("none", 0, 0, 12)), WHEEL);
        assertEquals(ExitStatus.INVALID, status.code());
        assertTrue(status.reason().contains("12 connections failed to open"), status.reason());
    }

    private static RunResult run(String handler, int missed, int falseIdle, int failed) {
        return Runs.run(handler, 1, 3_300, 40_000, missed, falseIdle, failed, 400);
    }
}
