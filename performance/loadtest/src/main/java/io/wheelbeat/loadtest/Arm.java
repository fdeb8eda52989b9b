package io.wheelbeat.loadtest;

/**
 * One side of a comparison: a server with its own event loops and one idle handler (or none),
 * carrying its share of the session's connections beside the other arms in the same JVM.
 *
 * @param handler the idle handler in every pipeline of this arm's server
 * @param loop whose event loops this arm's server runs on
 * @param id the reports' name: the handler's id, or {@code <loop>-loop} where the session
 *     compares event loops
 */
record Arm(IdleHandlerKind handler, EventLoopKind loop, String id) {

    /** Whether this arm is wheelbeat's: its misses fail the command. */
    boolean ours() {
        return handler == IdleHandlerKind.WHEEL || loop == EventLoopKind.WHEEL;
    }
}
