package io.wheelbeat.netty.ratelimit;

import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Tells which rate-limit key a message counts against. Called on the event loop per message:
 * return an object the message or channel holds, not a new one.
 *
 * @param <K> the key type of the limiter
 */
@FunctionalInterface
public interface KeyExtractor<K> {

    /**
     * @param channel the channel
     * @return the key of {@code msg} read on {@code channel}, or {@code null} to let the message pass without counting
     *     it (a heartbeat, say). It must not release {@code msg}; if it throws, the handler releases the message and
     *     the exception goes to {@code exceptionCaught}
     * @param msg the message, or {@code null} when a connection (not a message) is counted
     */
    K keyOf(Channel channel, Object msg);

    /**
     * The remote IP address of the channel: the {@link InetAddress} of an
     * {@link InetSocketAddress} (the host name if it is unresolved), or the remote
     * {@link SocketAddress} itself on other transports (local, domain sockets); {@code null} when
     * the channel has no remote address. Allocates nothing: the channel keeps its address.
     *
     * @return the extractor of the remote IP
     */
    static KeyExtractor<Object> remoteIp() {
        return RemoteIp.INSTANCE;
    }
}

/** The default key: the peer's IP address. */
enum RemoteIp implements KeyExtractor<Object> {
    INSTANCE;

    @Override
    public Object keyOf(Channel channel, Object msg) {
        SocketAddress remote = channel.remoteAddress();
        if (remote instanceof InetSocketAddress inet) {
            InetAddress address = inet.getAddress();
            return address != null ? address : inet.getHostString();
        }
        return remote;
    }
}
