/** Not API: the argument checks of wheelbeat's settings, exported only to its own modules. */
package io.wheelbeat.core.internal.checks;
