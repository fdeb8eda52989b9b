package io.wheelbeat.netty.mqtt;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.heartbeat.internal.PingLoop;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client's side of MQTT's keep-alive (3.1, 3.1.1, 5), {@code HeartbeatHandler}'s pinging role
 * for it: from an accepting CONNACK on, a PINGREQ when nothing was written (flushed) for the
 * keep-alive (the CONNECT's, or MQTT 5's Server Keep Alive [MQTT-3.2.2-21]; none for 0); its PINGRESP
 * within the timeout (the keep-alive by default) fires {@link PongReceivedEvent}, else
 * {@link HeartbeatFailedEvent} and close. PINGRESPs are consumed while pinging. Place it after
 * {@code MqttDecoder, MqttEncoder.INSTANCE}. A handler serves one channel, on its event loop.
 */
public final class MqttClientKeepAliveHandler extends ChannelTimerHandler {

    private final Factory settings;
    private final PingLoop pings = new PingReq();
    /** The keep-alive of the CONNECT written, -1 before it. */
    private int connectKeepAlive = -1;

    private MqttClientKeepAliveHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
    }

    /** @return a new builder; the PINGRESP timeout is the keep-alive by default */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof MqttConnectMessage connect) {
            connectKeepAlive = connect.variableHeader().keepAliveTimeSeconds();
        }
        pings.onWrite();
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        pings.onFlush();
        ctx.flush();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (pings.running() && isPingResp(msg)) {
            pings.onPongInOrder();
            return;
        }
        if (connectKeepAlive >= 0
                && running()
                && msg instanceof MqttConnAckMessage connAck
                && connAck.variableHeader().connectReturnCode() == MqttConnectReturnCode.CONNECTION_ACCEPTED) {
            MqttProperties.MqttProperty<?> serverKeepAlive = connAck.variableHeader()
                    .properties()
                    .getProperty(MqttServerKeepAliveHandler.SERVER_KEEP_ALIVE_PROPERTY);
            int keepAlive = serverKeepAlive != null ? (Integer) serverKeepAlive.value() : connectKeepAlive;
            if (keepAlive > 0) {
                pings.start(settings.pinging(keepAlive), ctx);
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {} // pinging starts at the CONNACK

    @Override
    protected void onStop() {
        pings.stop();
    }

    /** PINGREQ; a missed PINGRESP fires the event and closes. Static: no reference to the handler. */
    private static final class PingReq extends PingLoop {
        @Override
        protected Object newPing(ChannelHandlerContext ctx, long pingId) {
            return MqttMessage.PINGREQ;
        }
    }

    static boolean isPingResp(Object msg) {
        return msg instanceof MqttMessage m
                && m.fixedHeader() != null
                && m.fixedHeader().messageType() == MqttMessageType.PINGRESP;
    }

    /** Immutable, thread-safe settings that make one {@link MqttClientKeepAliveHandler} per channel. */
    public static final class Factory {
        private final long pingRespTimeoutNanos;
        private final EventLoopWheels wheels;
        private final MeterRegistry registry;
        /** The pinging settings per keep-alive in use: few values. */
        private final Map<Integer, PingLoop.Settings> pinging = new ConcurrentHashMap<>();

        private Factory(long pingRespTimeoutNanos, EventLoopWheels wheels, MeterRegistry registry) {
            this.pingRespTimeoutNanos = pingRespTimeoutNanos;
            this.wheels = wheels;
            this.registry = registry;
        }

        private PingLoop.Settings pinging(int keepAliveSeconds) {
            return pinging.computeIfAbsent(
                    keepAliveSeconds,
                    seconds -> new PingLoop.Settings(
                            TimeUnit.SECONDS.toNanos(seconds),
                            pingRespTimeoutNanos,
                            1,
                            0,
                            Jitter.THREAD_LOCAL_RANDOM,
                            PingLoop.Traffic.WRITES,
                            registry));
        }

        /** @return a new handler, for one channel only */
        public MqttClientKeepAliveHandler newHandler() {
            return new MqttClientKeepAliveHandler(this);
        }
    }

    /** Settings of a {@link MqttClientKeepAliveHandler}, with {@link HandlerBuilder}'s. Not thread-safe. */
    public static final class Builder extends HandlerBuilder<Builder> {
        private long pingRespTimeoutNanos;

        private Builder() {}

        /**
         * How long a PINGRESP may take before the connection is closed; the keep-alive by default.
         * @param timeout the time limit, positive
         * @return this builder
         */
        public Builder pingRespTimeout(Duration timeout) {
            this.pingRespTimeoutNanos = ConfigChecks.positiveNanos("pingRespTimeout", timeout);
            return this;
        }

        /** @return the factory, immutable and thread-safe */
        public Factory build() {
            return new Factory(pingRespTimeoutNanos, wheels(), registry());
        }
    }
}
