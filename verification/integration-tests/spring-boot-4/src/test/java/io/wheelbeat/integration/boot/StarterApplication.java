package io.wheelbeat.integration.boot;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.reactive.socket.WebSocketHandler;
import reactor.netty.Connection;

/**
 * A WebFlux application as a user writes it: routes, a WebSocket endpoint and one rate limiter
 * bean, no wheelbeat code;
 * the starter and the {@code wheelbeat.*} properties do the rest.
 */
@SpringBootApplication
class StarterApplication {

    @Bean
    RouterFunction<ServerResponse> routes() {
        return RouterFunctions.route()
                .GET("/ok", request -> ServerResponse.ok().bodyValue("ok"))
                .GET(
                        "/keepalive",
                        request -> ServerResponse.ok()
                                .bodyValue(keepAliveOf(request.exchange().getRequest())))
                .build();
    }

    /**
     * The TCP keepalive options of the connection {@code request} came on, read from its socket
     * through the channel's config: {@code SO_KEEPALIVE=true TCP_KEEPIDLE=7}, whatever the transport.
     */
    private static String keepAliveOf(ServerHttpRequest request) {
        Channel channel = ((Connection) ServerHttpRequestDecorator.getNativeRequest(request)).channel();
        Map<ChannelOption<?>, Object> options = channel.config().getOptions();
        Object idle = options.entrySet().stream()
                .filter(e -> e.getKey().name().endsWith("TCP_KEEPIDLE"))
                .map(Map.Entry::getValue)
                .findFirst()
                .orElse("none");
        return "SO_KEEPALIVE=" + options.get(ChannelOption.SO_KEEPALIVE) + " TCP_KEEPIDLE=" + idle;
    }

    /** A WebSocket endpoint that holds each session open until the client ends it. */
    @Bean
    HandlerMapping webSocketRoutes() {
        WebSocketHandler holdOpen = session -> session.receive().then();
        return new SimpleUrlHandlerMapping(Map.of("/ws", holdOpen), -1);
    }

    @Bean(destroyMethod = "stop")
    WheelTimer limiterTimer() {
        return WheelTimer.builder().build();
    }

    @Bean(destroyMethod = "close")
    KeyedRateLimiter<String> apiLimiter(WheelTimer limiterTimer) {
        return KeyedRateLimiter.builder(RateLimit.tokenBucket(100, Duration.ofSeconds(1)), limiterTimer)
                .name("api")
                .build();
    }
}
