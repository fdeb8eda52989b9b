/**
 * The handlers' shared machinery: their timer nodes, jitter, connection meters and the clock each
 * event loop runs on. Not exported: not API.
 */
package io.wheelbeat.netty.internal;
