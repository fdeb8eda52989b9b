package io.wheelbeat.core;

/** A timer node that runs an action when it expires, for tests. */
final class RunningNode extends TimerNode {

    private final Runnable action;

    RunningNode(Runnable action) {
        this.action = action;
    }

    /** A node that does nothing when it expires. */
    static RunningNode idle() {
        return new RunningNode(() -> {});
    }

    @Override
    protected void expire() {
        action.run();
    }
}
