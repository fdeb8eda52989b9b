package io.wheelbeat.loadtest;

/**
 * The client side of a run as the server side drives it: in this JVM ({@link HeartbeatDriver},
 * local tier) or in a separate process ({@link RemoteLoadClient}, TCP tier).
 */
interface LoadClient extends AutoCloseable {

    /** Starts the ramp and the heartbeats. */
    void start();

    int opened();

    int failed();

    /** Whether every connect has finished, one way or the other. */
    boolean rampDone();

    /** Stops opening and waits until no connect is in flight; heartbeats go on. */
    void pauseOpening() throws Exception;

    void resumeOpening() throws Exception;

    /** From now on, the planned connections go silent at their planned times. */
    void beginSilence() throws Exception;

    /** Starts closing every connection from the client side; returns without waiting. */
    void closeConnections() throws Exception;

    /** The client side's totals so far. */
    ClientStats stats() throws Exception;

    /**
     * Closes every connection and stops the client side. An interrupt while waiting for that is
     * kept on the thread, not thrown.
     */
    @Override
    void close();

    /**
     * @param heartbeatsSent heartbeats sent (hellos not included)
     * @param maxSenderLagNanos how far behind schedule a heartbeat sender fell at worst
     * @param cpuNanos CPU time of the client side: its event loops (local tier) or its whole
     *     process (TCP tier)
     */
    record ClientStats(long heartbeatsSent, long maxSenderLagNanos, long cpuNanos) {}
}
