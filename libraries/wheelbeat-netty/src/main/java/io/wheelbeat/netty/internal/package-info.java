/**
 * The handlers' shared machinery (lifecycle, builder options, meters, checks). Not API: the
 * module does not export this package; its types may change at any time.
 */
package io.wheelbeat.netty.internal;
