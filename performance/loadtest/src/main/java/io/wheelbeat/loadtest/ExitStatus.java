package io.wheelbeat.loadtest;

import java.util.List;
import java.util.Locale;

/**
 * What the command's exit status says about a finished session, and the one console line that
 * says why when it is not 0. Pure: decided from the results alone.
 *
 * <ul>
 *   <li>{@link #INVALID}: the comparison is void: a connection failed to open or never said
 *       hello, so the arms did not hold the same load.</li>
 *   <li>{@link #WHEELBEAT_MISSED}: wheelbeat's arm missed a silenced connection or reported a
 *       talking one idle: the product failed its job.</li>
 *   <li>0 otherwise. A peer's misses are a row of the verdict, not a failure of the command.</li>
 * </ul>
 *
 * @param code the process exit status
 * @param reason one line, empty for 0
 */
record ExitStatus(int code, String reason) {

    static final int OK = 0;
    static final int WHEELBEAT_MISSED = 3;
    static final int INVALID = 4;

    /**
     * @param runs every arm's result of the session
     * @param ours which arms are wheelbeat's (their misses fail the command)
     */
    static ExitStatus of(List<RunResult> runs, java.util.function.Predicate<RunResult> ours) {
        long failed =
                runs.stream().mapToLong(r -> r.failed() + r.idle().neverHeard()).sum();
        if (failed > 0) {
            return new ExitStatus(
                    INVALID,
                    String.format(
                            Locale.ROOT,
                            "exit %d: the run is not valid: %,d connections failed to open or never said hello, "
                                    + "so the arms did not carry the same load",
                            INVALID,
                            failed));
        }
        StringBuilder why = new StringBuilder();
        for (RunResult r : runs) {
            RunResult.Idle idle = r.idle();
            if (ours.test(r) && idle.applicable() && (idle.missed() > 0 || idle.falseIdle() > 0)) {
                why.append(why.length() == 0 ? "" : "; ")
                        .append(String.format(
                                Locale.ROOT,
                                "%s%s missed %,d of %,d silenced connections and reported %,d talking ones idle "
                                        + "(lateness p50 %s ms, max %s ms)",
                                r.handler(),
                                r.round() > 1 ? " (round " + r.round() + ")" : "",
                                idle.missed(),
                                idle.plannedSilent(),
                                idle.falseIdle(),
                                VerdictTable.number(idle.lateness().p50Ms()),
                                VerdictTable.number(idle.lateness().maxMs())));
                // A peer that missed in the same JVM at the same time points at the machine.
                for (RunResult peer : runs) {
                    if (!ours.test(peer)
                            && peer.round() == r.round()
                            && peer.idle().applicable()
                            && peer.idle().missed() + peer.idle().falseIdle() > 0) {
                        why.append(String.format(
                                Locale.ROOT,
                                " (beside it %s missed %,d and reported %,d " + "falsely: the machine stalled both)",
                                peer.handler(),
                                peer.idle().missed(),
                                peer.idle().falseIdle()));
                    }
                }
            }
        }
        if (why.length() > 0) {
            return new ExitStatus(WHEELBEAT_MISSED, "exit " + WHEELBEAT_MISSED + ": wheelbeat failed its job: " + why);
        }
        return new ExitStatus(OK, "");
    }
}
