package io.wheelbeat.integration.boot;

import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.time.Duration;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * A WebFlux application as a user writes it: routes and one rate limiter bean, no wheelbeat code;
 * the starter and the {@code wheelbeat.*} properties do the rest.
 */
@SpringBootApplication
class StarterApplication {

    @Bean
    RouterFunction<ServerResponse> routes() {
        return RouterFunctions.route()
                .GET("/ok", request -> ServerResponse.ok().bodyValue("ok"))
                .build();
    }

    @Bean(destroyMethod = "stop")
    WheelTimer limiterTimer() {
        return WheelTimer.builder().build();
    }

    @Bean(destroyMethod = "close")
    KeyedRateLimiter<String> apiLimiter(WheelTimer limiterTimer) {
        return KeyedRateLimiter.builder(RateLimit.tokenBucket(100, Duration.ofSeconds(1)), limiterTimer).name("api").build();
    }
}
