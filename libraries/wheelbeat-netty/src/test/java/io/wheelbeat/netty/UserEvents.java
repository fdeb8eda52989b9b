package io.wheelbeat.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayList;
import java.util.List;

/** Records the user events that reach it, and whether the channel was still active then. */
public final class UserEvents extends ChannelInboundHandlerAdapter {

    private final List<Object> events = new ArrayList<>();
    private final List<Boolean> activeAtEvent = new ArrayList<>();

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        events.add(evt);
        activeAtEvent.add(ctx.channel().isActive());
        ctx.fireUserEventTriggered(evt);
    }

    /** Every event so far, in order. */
    public List<Object> all() {
        return events;
    }

    /** The events of {@code type}, in order. */
    public <T> List<T> ofType(Class<T> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** Whether the channel was active when the {@code index}-th event came. */
    public boolean activeAt(int index) {
        return activeAtEvent.get(index);
    }
}
