/**
 * The handlers' and the event loop's shared machinery: timer nodes, jitter, meters, clocks. Not
 * exported: not API.
 */
package io.wheelbeat.netty.internal;
