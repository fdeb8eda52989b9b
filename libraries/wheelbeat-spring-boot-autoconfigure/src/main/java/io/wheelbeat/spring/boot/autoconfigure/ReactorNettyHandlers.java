package io.wheelbeat.spring.boot.autoconfigure;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.wheelbeat.netty.TcpKeepAlive;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.guard.SlowConsumerHandler;
import io.wheelbeat.netty.idle.TimeoutCloses;
import io.wheelbeat.netty.idle.WheelReadTimeoutHandler;
import io.wheelbeat.netty.idle.WheelWriteTimeoutHandler;
import java.time.Duration;
import java.util.function.UnaryOperator;
import reactor.netty.NettyPipeline;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * The wheelbeat handlers every connection of the Reactor Netty server and of {@code WebClient}
 * gets, as {@link WheelbeatProperties} says. They go in when the connection is set up
 * ({@code doOnChannelInit}), right after Reactor Netty's HTTP codec
 * ({@link NettyPipeline#HttpCodec}), so they watch the connection from its first byte, across
 * every request, until it closes: Reactor Netty removes what {@code doOnConnection} adds when each
 * request ends. The slow-consumer guard goes first in the pipeline, nearest the socket, so that
 * it sees every write. A pipeline without the HTTP codec at that moment (HTTP/2 over TLS before
 * ALPN) gets them last. TCP keepalive, when set, goes on the socket ({@link TcpKeepAlive}).
 *
 * <p>Under Reactor Netty nothing consumes {@code IdleStateEvent}: every handler here closes the
 * connection itself. Timeout closes are quiet unless {@code wheelbeat.quiet-timeout-close=false}.
 *
 * <p>Immutable and thread-safe: the handler factories are built once, each connection gets new
 * handlers from them.
 */
public final class ReactorNettyHandlers {

    private final Side server;
    private final Side client;

    /** The handlers the properties ask for, with the meters {@code meters} gives them. */
    ReactorNettyHandlers(WheelbeatProperties properties, HandlerMeters meters) {
        TimeoutCloses closes = meters.count(properties.isQuietTimeoutClose() ? TimeoutCloses.quiet()
                : TimeoutCloses.firingException());
        WheelbeatProperties.Server server = properties.getServer();
        this.server = side(server, server.getFirstRequestTimeout(), slowConsumer(server.getSlowConsumer(), meters),
                closes, meters);
        this.client = side(properties.getClient(), null, null, closes, meters);
    }

    /**
     * Adds the server's handlers to each connection of {@code server}; {@code server} itself when
     * no server property is set.
     *
     * @param server the server to configure
     * @return the server whose connections get the handlers
     */
    public HttpServer customize(HttpServer server) {
        return this.server.isEmpty() ? server : server.doOnChannelInit((observer, channel, address) -> this.server.addTo(channel));
    }

    /**
     * Adds the client's handlers to each connection of {@code client}; {@code client} itself when
     * no client property is set.
     *
     * @param client the client to configure
     * @return the client whose connections get the handlers
     */
    public HttpClient customize(HttpClient client) {
        return this.client.isEmpty() ? client : client.doOnChannelInit((observer, channel, address) -> this.client.addTo(channel));
    }

    /** {@link #customize(HttpServer)} as a function, for Boot's {@code NettyServerCustomizer}. */
    public UnaryOperator<HttpServer> serverCustomizer() {
        return this::customize;
    }

    /** {@link #customize(HttpClient)} as a function, for Boot's connector builder customizers. */
    public UnaryOperator<HttpClient> clientCustomizer() {
        return this::customize;
    }

    private static Side side(WheelbeatProperties.Connections connections, Duration firstRequest,
                             SlowConsumerHandler.Factory slowConsumer, TimeoutCloses closes, HandlerMeters meters) {
        Duration maxAge = connections.getMaxConnectionAge();
        ConnectionDeadlineHandler.Factory deadlines = null;
        if (firstRequest != null || maxAge != null) {
            ConnectionDeadlineHandler.Builder builder = ConnectionDeadlineHandler.builder();
            if (firstRequest != null) {
                builder.firstMessageTimeout(firstRequest);
            }
            if (maxAge != null) {
                builder.maxConnectionAge(MaxConnectionAge.of(maxAge).withJitter(connections.getMaxConnectionAgeJitter())
                        .withGrace(connections.getMaxConnectionAgeGrace()));
            }
            deadlines = meters.count(builder).build();
        }
        return new Side(connections.getTcpKeepAlive().toTcpKeepAlive(), closes, connections.getReadTimeout(),
                connections.getWriteTimeout(), deadlines, slowConsumer);
    }

    private static SlowConsumerHandler.Factory slowConsumer(WheelbeatProperties.SlowConsumer properties,
                                                            HandlerMeters meters) {
        if (!properties.isEnabled()) {
            return null;
        }
        SlowConsumerHandler.Builder builder = SlowConsumerHandler.builder()
                .maxPendingBytes(properties.getMaxPending().toBytes())
                .unwritableTimeout(properties.getUnwritableTimeout());
        return meters.count(builder).build();
    }

    /** The handlers of one side (server or client); null factories and durations are off. */
    private record Side(TcpKeepAlive tcpKeepAlive, TimeoutCloses closes, Duration readTimeout, Duration writeTimeout,
                        ConnectionDeadlineHandler.Factory deadlines, SlowConsumerHandler.Factory slowConsumer) {

        boolean isEmpty() {
            return tcpKeepAlive == null && readTimeout == null && writeTimeout == null && deadlines == null
                    && slowConsumer == null;
        }

        void addTo(Channel channel) {
            if (tcpKeepAlive != null) {
                tcpKeepAlive.applyTo(channel);
            }
            ChannelPipeline pipeline = channel.pipeline();
            if (slowConsumer != null) {
                pipeline.addFirst("wheelbeat.slowConsumer", slowConsumer.newHandler());
            }
            String after = pipeline.get(NettyPipeline.HttpCodec) != null ? NettyPipeline.HttpCodec : null;
            if (deadlines != null) {
                after = add(pipeline, after, "wheelbeat.deadlines", deadlines.newHandler());
            }
            if (readTimeout != null) {
                after = add(pipeline, after, "wheelbeat.readTimeout", new WheelReadTimeoutHandler(readTimeout, closes));
            }
            if (writeTimeout != null) {
                add(pipeline, after, "wheelbeat.writeTimeout", new WheelWriteTimeoutHandler(writeTimeout, closes));
            }
        }

        /** Adds {@code handler} after the handler named {@code after} (last if null); returns its name. */
        private static String add(ChannelPipeline pipeline, String after, String name, ChannelHandler handler) {
            if (after == null) {
                pipeline.addLast(name, handler);
            } else {
                pipeline.addAfter(after, name, handler);
            }
            return name;
        }
    }
}
