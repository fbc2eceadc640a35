/**
 * Resource caps against the network: the {@link dev.fencing.memberlist.limits.Limit} names shared by the codec and
 * the transport, and {@link dev.fencing.memberlist.limits.Refusals}, which counts every input refused by a cap and
 * logs it at most once per interval per cap. The values themselves are {@link dev.fencing.memberlist.Config} fields.
 */
package dev.fencing.memberlist.limits;
