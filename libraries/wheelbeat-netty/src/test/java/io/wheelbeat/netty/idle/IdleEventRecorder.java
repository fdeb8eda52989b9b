package io.wheelbeat.netty.idle;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.netty.VirtualTime;
import java.util.ArrayList;
import java.util.List;

/** Records every idle event that reaches it, with the executor's ticker reading at that moment. */
final class IdleEventRecorder extends ChannelInboundHandlerAdapter {

    /** One recorded event. */
    record Fired(IdleStateEvent event, long nanoTime) {
        @Override
        public String toString() {
            return event.state() + (event.isFirst() ? "(first)" : "") + "@" + nanoTime;
        }
    }

    final List<Fired> fired = new ArrayList<>();
    final List<Throwable> exceptions = new ArrayList<>();

    List<IdleStateEvent> events() {
        return fired.stream().map(Fired::event).toList();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent event) {
            fired.add(new Fired(event, VirtualTime.now(ctx.channel())));
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        exceptions.add(cause);
    }
}
