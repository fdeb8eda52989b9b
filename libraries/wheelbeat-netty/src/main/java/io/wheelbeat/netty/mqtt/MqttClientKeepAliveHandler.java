package io.wheelbeat.netty.mqtt;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client's side of MQTT's keep-alive (3.1, 3.1.1, 5): at an accepting CONNACK it puts in its place a
 * {@link HeartbeatHandler} sending PINGREQ after the keep-alive without a flushed write (the CONNECT's, or MQTT
 * 5's Server Keep Alive [MQTT-3.2.2-21]; none for 0); a PINGRESP in time fires {@link PongReceivedEvent}, none
 * {@link HeartbeatFailedEvent} and a close. After {@code MqttDecoder, MqttEncoder.INSTANCE}; one channel.
 */
public final class MqttClientKeepAliveHandler extends ChannelDuplexHandler {

    private final Factory settings;
    /** The keep-alive of the CONNECT written, -1 before it. */
    private int connectKeepAlive = -1;

    private MqttClientKeepAliveHandler(Factory settings) {
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
        ctx.write(msg, promise);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (connectKeepAlive >= 0
                && msg instanceof MqttConnAckMessage connAck
                && connAck.variableHeader().connectReturnCode() == MqttConnectReturnCode.CONNECTION_ACCEPTED) {
            MqttProperties.MqttProperty<?> serverKeepAlive = connAck.variableHeader()
                    .properties()
                    .getProperty(MqttServerKeepAliveHandler.SERVER_KEEP_ALIVE_PROPERTY);
            int keepAlive = serverKeepAlive != null ? (Integer) serverKeepAlive.value() : connectKeepAlive;
            if (keepAlive > 0) {
                ctx.pipeline()
                        .addAfter(ctx.name(), null, settings.pinging(keepAlive).newHandler());
            }
            ctx.pipeline().remove(this);
        }
        ctx.fireChannelRead(msg);
    }

    /** Immutable, thread-safe settings that make one {@link MqttClientKeepAliveHandler} per channel. */
    public static final class Factory {
        private final Duration pingRespTimeout;
        private final EventLoopWheels wheels;
        private final MeterRegistry registry;
        /** Per keep-alive in use: few values. */
        private final Map<Integer, HeartbeatHandler.Factory> pinging = new ConcurrentHashMap<>();

        private Factory(Duration pingRespTimeout, EventLoopWheels wheels, MeterRegistry registry) {
            this.pingRespTimeout = pingRespTimeout;
            this.wheels = wheels;
            this.registry = registry;
        }

        private HeartbeatHandler.Factory pinging(int keepAliveSeconds) {
            return pinging.computeIfAbsent(keepAliveSeconds, seconds -> {
                HeartbeatHandler.Builder heartbeat = HeartbeatHandler.builder()
                        .sendPings(Duration.ofSeconds(seconds), channel -> MqttMessage.PINGREQ, Factory::isPingResp)
                        .maxMissedPongs(1)
                        .wheels(wheels);
                if (pingRespTimeout != null) {
                    heartbeat.pongTimeout(pingRespTimeout);
                }
                return (registry == null ? heartbeat : heartbeat.metrics(registry)).build();
            });
        }

        private static boolean isPingResp(Object msg) {
            return msg instanceof MqttMessage m
                    && m.fixedHeader() != null
                    && m.fixedHeader().messageType() == MqttMessageType.PINGRESP;
        }

        /** @return a new handler, for one channel only */
        public MqttClientKeepAliveHandler newHandler() {
            return new MqttClientKeepAliveHandler(this);
        }
    }

    /** Settings of a {@link MqttClientKeepAliveHandler}, with {@link HandlerBuilder}'s. Not thread-safe. */
    public static final class Builder extends HandlerBuilder<Builder> {
        private Duration pingRespTimeout;

        private Builder() {}

        /**
         * How long a PINGRESP may take before the connection is closed; the keep-alive by default.
         * @param timeout the time limit, positive
         * @return this builder
         */
        public Builder pingRespTimeout(Duration timeout) {
            ConfigChecks.positiveNanos("pingRespTimeout", timeout);
            this.pingRespTimeout = timeout;
            return this;
        }

        /** @return the factory, immutable and thread-safe */
        public Factory build() {
            return new Factory(pingRespTimeout, wheels(), registry());
        }
    }
}
