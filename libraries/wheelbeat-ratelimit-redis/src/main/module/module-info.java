/** Per-key rate limits shared across a cluster through Redis (Lettuce). */
module io.wheelbeat.ratelimit.redis {
    requires transitive io.wheelbeat.core;
    requires lettuce.core;
    requires org.slf4j;

    exports io.wheelbeat.ratelimit.redis;
}
