package io.wheelbeat.netty.mqtt;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnAckVariableHeader;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttReasonCodes;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.heartbeat.internal.PingEnforcement;
import io.wheelbeat.netty.internal.ConnectionMeters;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's side of MQTT's keep-alive (3.1, 3.1.1, 5). A first packet other than CONNECT, or a second
 * CONNECT, is a protocol error [MQTT-3.1.0-1, -2] (the time for the CONNECT is a {@code ConnectionDeadlineHandler}'s
 * before this one). A keep-alive outside [{@link Builder#minKeepAlive}, {@link Builder#maxKeepAlive}] (0 above any
 * maximum) is refused to MQTT 3.x (CONNACK "identifier rejected"), replaced for MQTT 5 by the nearest allowed
 * value, the Server Keep Alive of the application's CONNACK. 1.5 times the keep-alive without a packet
 * [MQTT-3.1.2-24] fires {@link MqttKeepAliveTimeoutEvent}. PINGREQs get PINGRESPs, one flush per read batch, one
 * owed while unwritable; the last strike of {@link Builder#pingLimits} fires {@link TooManyPingsEvent}. Each of
 * these closes, after a DISCONNECT with the reason to an MQTT 5 client.
 *
 * <p>Other packets, failed decodes and non-MQTT messages pass. Answer a failed decode; before the
 * CONNECT the handler then closes ({@code protocol_error}), after it you must. Place it after
 * {@code MqttDecoder, MqttEncoder.INSTANCE}. Meters: {@code HeartbeatHandler}'s answering ones and
 * {@code wheelbeat.connection.closed{reason}}. One channel, on its event loop.
 */
public final class MqttServerKeepAliveHandler extends ChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(MqttServerKeepAliveHandler.class);
    private static final int MQTT_5 = MqttVersion.MQTT_5.protocolLevel();
    /** The largest keep-alive MQTT can express: 18 h 12 min 15 s. */
    private static final int MAX_KEEP_ALIVE = 65_535;
    /** MQTT 5's Server Keep Alive property (3.2.2.3.14), which Netty 4.1's {@code MqttProperties} lacks. */
    static final int SERVER_KEEP_ALIVE_PROPERTY = 0x13;

    private final Factory settings;
    private final PingEnforcement.Strikes strikes;
    private boolean connected;
    private boolean connAckSeen;
    private int version;
    private int requestedKeepAlive;
    /** The keep-alive in force, in seconds; 0 for none. */
    private int keepAliveSeconds;

    private long lastReadNanos;
    private boolean readInBatch;
    private boolean answerPending;
    /** A PINGREQ came while the channel was not writable. */
    private boolean answerOwed;

    private MqttServerKeepAliveHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
        this.strikes = settings.enforcement == null ? null : new PingEnforcement.Strikes();
    }

    /** @return a new builder with the defaults: any keep-alive allowed, {@link PingLimits#DEFAULT} */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!running() || !(msg instanceof MqttMessage packet)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (packet.decoderResult().isFailure()) {
            ctx.fireChannelRead(msg); // the broker may answer it (CONNACK 0x01 for an unknown version)
            if (!connected && ctx.channel().isActive()) { // the decoder reads nothing more: no CONNECT can come
                ConnectionMeters.count(settings.protocolErrorCloses);
                ctx.close();
            }
            return;
        }
        readInBatch = true;
        if (!connected) {
            if (packet instanceof MqttConnectMessage connect) {
                onConnect(ctx, connect);
            } else {
                protocolError(ctx, packet, "a first packet that is not a CONNECT");
            }
            return;
        }
        MqttMessageType type = packet.fixedHeader().messageType();
        if (type == MqttMessageType.PINGREQ) {
            onPingRequest(ctx);
        } else if (type == MqttMessageType.CONNECT) {
            protocolError(ctx, packet, "a second CONNECT");
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (readInBatch) {
            readInBatch = false;
            lastReadNanos = now();
        }
        if (answerPending) {
            answerPending = false;
            ctx.flush();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (answerOwed && ctx.channel().isWritable() && ctx.channel().isActive()) {
            answerOwed = false;
            ConnectionMeters.count(settings.pingsAnswered);
            ctx.writeAndFlush(MqttMessage.PINGRESP, ctx.voidPromise());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (!connAckSeen && msg instanceof MqttConnAckMessage connAck && connected) {
            connAckSeen = true;
            msg = onConnAck(connAck);
        }
        ctx.write(msg, promise);
    }

    /** The handler is its one timer, the keep-alive's, armed at the CONNECT. */
    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {}

    @Override
    protected void onStop() {
        cancel(this);
    }

    private void onConnect(ChannelHandlerContext ctx, MqttConnectMessage connect) {
        connected = true;
        version = connect.variableHeader().version();
        requestedKeepAlive = connect.variableHeader().keepAliveTimeSeconds();
        int allowed = settings.allowedKeepAlive(requestedKeepAlive);
        if (allowed != requestedKeepAlive && version < MQTT_5) {
            ReferenceCountUtil.release(connect);
            ConnectionMeters.count(settings.outOfRangeCloses);
            log.debug("{}: keep-alive {} s not allowed, refusing", ctx.channel(), requestedKeepAlive);
            connAckSeen = true;
            MqttConnectReturnCode rejected = MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED;
            ctx.writeAndFlush(MqttMessageBuilders.connAck().returnCode(rejected).build(), ctx.voidPromise());
            ctx.close();
            return;
        }
        lastReadNanos = now();
        keepAlive(allowed);
        ctx.fireChannelRead(connect);
    }

    /** Returns the CONNACK to send: with the Server Keep Alive if the client's value was replaced. */
    private MqttConnAckMessage onConnAck(MqttConnAckMessage connAck) {
        MqttConnAckVariableHeader header = connAck.variableHeader();
        if (version < MQTT_5 || header.connectReturnCode() != MqttConnectReturnCode.CONNECTION_ACCEPTED) {
            return connAck;
        }
        MqttProperties.MqttProperty<?> serverKeepAlive = header.properties().getProperty(SERVER_KEEP_ALIVE_PROPERTY);
        if (serverKeepAlive != null) {
            keepAlive((Integer) serverKeepAlive.value()); // the application decided
            return connAck;
        }
        if (keepAliveSeconds == requestedKeepAlive) {
            return connAck;
        }
        MqttProperties properties = new MqttProperties();
        for (MqttProperties.MqttProperty<?> property : header.properties().listAll()) {
            properties.add(property);
        }
        properties.add(new MqttProperties.IntegerProperty(SERVER_KEEP_ALIVE_PROPERTY, keepAliveSeconds));
        return new MqttConnAckMessage(
                connAck.fixedHeader(),
                new MqttConnAckVariableHeader(header.connectReturnCode(), header.isSessionPresent(), properties));
    }

    /** Puts {@code seconds} in force, the deadline running from the last read. */
    private void keepAlive(int seconds) {
        keepAliveSeconds = seconds;
        cancel(this);
        if (seconds > 0) {
            schedule(this, Math.max(0, keepAliveSeconds * 1_500_000_000L - (now() - lastReadNanos)));
        }
    }

    /** Closes if the client was silent for the whole deadline, else waits for the rest of it. */
    @Override
    protected void expire() {
        long now = now();
        if (readInBatch) { // the batch began before this timer ran: it counts as a read now
            readInBatch = false;
            lastReadNanos = now;
        }
        long left = keepAliveSeconds * 1_500_000_000L - (now - lastReadNanos);
        if (left > 0) {
            schedule(this, left);
            return;
        }
        ChannelHandlerContext ctx = ctx();
        ConnectionMeters.count(settings.keepAliveCloses);
        log.debug("{}: nothing read for 1.5 x {} s, closing", ctx.channel(), keepAliveSeconds);
        ctx.fireUserEventTriggered(new MqttKeepAliveTimeoutEvent(keepAliveSeconds));
        disconnect(ctx, MqttReasonCodes.Disconnect.KEEP_ALIVE_TIMEOUT);
    }

    private void onPingRequest(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive()) {
            return; // closing already: the rest of a read batch gets neither answers nor strikes
        }
        if (settings.enforcement != null
                && settings.enforcement.strikesOut(ctx, strikes, now(), settings.enforcement.minIntervalNanos())) {
            disconnect(ctx, MqttReasonCodes.Disconnect.MESSAGE_RATE_TOO_HIGH);
            return;
        }
        if (!ctx.channel().isWritable()) {
            answerOwed = true; // answered when the client has read what waits for it
            return;
        }
        ConnectionMeters.count(settings.pingsAnswered);
        answerPending = true;
        ctx.write(MqttMessage.PINGRESP, ctx.voidPromise());
    }

    private void protocolError(ChannelHandlerContext ctx, MqttMessage packet, String what) {
        ReferenceCountUtil.release(packet);
        if (!ctx.channel().isActive()) {
            return;
        }
        ConnectionMeters.count(settings.protocolErrorCloses);
        log.debug("{}: {}, closing", ctx.channel(), what);
        disconnect(ctx, MqttReasonCodes.Disconnect.PROTOCOL_ERROR);
    }

    /** Closes the connection, telling an MQTT 5 client why first [MQTT-4.13.2-1]. */
    private void disconnect(ChannelHandlerContext ctx, MqttReasonCodes.Disconnect reason) {
        if (version >= MQTT_5 && ctx.channel().isActive()) {
            // Not waiting for the write: a client that does not read must not hold the channel open.
            MqttMessage bye = MqttMessageBuilders.disconnect()
                    .reasonCode(reason.byteValue())
                    .build();
            ctx.writeAndFlush(bye, ctx.voidPromise());
        } else if (answerPending) {
            ctx.flush();
        }
        answerPending = false;
        ctx.close();
    }

    /** Immutable, thread-safe settings that make one {@link MqttServerKeepAliveHandler} per channel. */
    public static final class Factory {
        private final int minKeepAlive;
        private final int maxKeepAlive;
        private final PingEnforcement enforcement;
        private final EventLoopWheels wheels;
        private final Counter pingsAnswered;
        private final Counter keepAliveCloses;
        private final Counter protocolErrorCloses;
        private final Counter outOfRangeCloses;

        private Factory(Builder b, EventLoopWheels wheels, PingEnforcement enforcement, MeterRegistry registry) {
            this.minKeepAlive = b.minKeepAlive;
            this.maxKeepAlive = b.maxKeepAlive;
            this.enforcement = enforcement;
            this.wheels = wheels;
            this.pingsAnswered = PingEnforcement.pingsAnswered(registry);
            this.keepAliveCloses = ConnectionMeters.closed(registry, "reader_idle");
            this.protocolErrorCloses = ConnectionMeters.closed(registry, "protocol_error");
            this.outOfRangeCloses = ConnectionMeters.closed(registry, "keepalive_out_of_range");
        }

        /** The allowed keep-alive nearest to {@code requested}: {@code requested} itself when allowed. */
        private int allowedKeepAlive(int requested) {
            if (requested == 0) {
                return maxKeepAlive < MAX_KEEP_ALIVE ? maxKeepAlive : 0;
            }
            return Math.min(Math.max(requested, minKeepAlive), maxKeepAlive);
        }

        /** @return a new handler, for one channel only */
        public MqttServerKeepAliveHandler newHandler() {
            return new MqttServerKeepAliveHandler(this);
        }
    }

    /** Settings of a {@link MqttServerKeepAliveHandler}, with {@link HandlerBuilder}'s. Not thread-safe. */
    public static final class Builder extends HandlerBuilder<Builder> {
        private PingLimits pingLimits = PingLimits.DEFAULT;
        private int minKeepAlive = 1;
        private int maxKeepAlive = MAX_KEEP_ALIVE;

        private Builder() {}

        /**
         * The smallest non-zero keep-alive a client may ask for, in seconds; 1 by default.
         * @param seconds the smallest keep-alive accepted, in seconds
         * @return this builder
         * @throws IllegalArgumentException unless {@code 1 <= seconds <= 65535}
         */
        public Builder minKeepAlive(int seconds) {
            this.minKeepAlive = keepAliveSeconds("minKeepAlive", seconds);
            return this;
        }

        /**
         * The largest keep-alive a client may ask for, in seconds (0, none, is above it); not limited by default.
         * @param seconds the largest keep-alive accepted, in seconds
         * @return this builder
         * @throws IllegalArgumentException unless {@code 1 <= seconds <= 65535}
         */
        public Builder maxKeepAlive(int seconds) {
            this.maxKeepAlive = keepAliveSeconds("maxKeepAlive", seconds);
            return this;
        }

        /**
         * How often the client may send PINGREQ; {@link PingLimits#DEFAULT} unless set.
         * @param limits the limits, or {@link PingLimits#OFF}; not null
         * @return this builder
         */
        public Builder pingLimits(PingLimits limits) {
            this.pingLimits = Objects.requireNonNull(limits, "pingLimits");
            return this;
        }

        /**
         * @return the factory of handlers with these settings, immutable and thread-safe
         * @throws IllegalStateException if the minimum keep-alive exceeds the maximum
         */
        public Factory build() {
            if (minKeepAlive > maxKeepAlive) {
                throw new IllegalStateException(
                        "minKeepAlive " + minKeepAlive + " s exceeds maxKeepAlive " + maxKeepAlive + " s");
            }
            return new Factory(this, wheels(), PingEnforcement.of(pingLimits, registry()), registry());
        }

        private static int keepAliveSeconds(String name, int seconds) {
            if (seconds < 1 || seconds > MAX_KEEP_ALIVE) {
                throw new IllegalArgumentException(name + " must be 1 to " + MAX_KEEP_ALIVE + " s: " + seconds);
            }
            return seconds;
        }
    }
}
