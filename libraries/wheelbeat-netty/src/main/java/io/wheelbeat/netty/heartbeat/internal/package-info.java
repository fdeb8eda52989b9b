/**
 * The keepalive family's shared machinery: the ping loop, ping enforcement and meters. Not exported.
 */
package io.wheelbeat.netty.heartbeat.internal;
