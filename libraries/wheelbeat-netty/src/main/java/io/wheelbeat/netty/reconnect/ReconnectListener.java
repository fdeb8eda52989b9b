package io.wheelbeat.netty.reconnect;

/**
 * Receives the {@link ReconnectEvent}s of a {@link ReconnectingClient}.
 *
 * <p>Called on the client's event loop, so it must not block. An exception it throws is logged
 * through SLF4J and does not stop the client.
 */
@FunctionalInterface
public interface ReconnectListener {

    /**
     * Called for each event, in order.
     *
     * @param event what happened
     */
    void onEvent(ReconnectEvent event);
}
