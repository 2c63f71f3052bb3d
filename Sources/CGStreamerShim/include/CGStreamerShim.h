// C helpers for what Swift cannot call directly: variadic signal emission and GObject setters, macros,
// and signal handlers with typed trampolines. Everything here is a thin wrapper over one GStreamer call.
#ifndef CGSTREAMER_SHIM_PUBLIC_H
#define CGSTREAMER_SHIM_PUBLIC_H
#define GST_USE_UNSTABLE_API 1
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

/// A context pointer handed back to Swift callbacks; `release` runs once when the handler goes away.
typedef void (*cgst_release_fn)(void *context);

/// `on-ice-candidate`: (context, m-line index, candidate line).
typedef void (*cgst_ice_candidate_fn)(void *context, guint mline, const char *candidate);
/// `pad-added`: (context, new pad).
typedef void (*cgst_pad_added_fn)(void *context, GstPad *pad);

/// Connects `on-ice-candidate` on a webrtcbin. Returns the handler id.
gulong cgst_connect_ice_candidate(GstElement *webrtc, cgst_ice_candidate_fn fn, void *context,
                                  cgst_release_fn release);
/// Connects `pad-added` on any element. Returns the handler id.
gulong cgst_connect_pad_added(GstElement *element, cgst_pad_added_fn fn, void *context, cgst_release_fn release);

/// A pad probe's callback; returns GST_PAD_PROBE_OK or GST_PAD_PROBE_REMOVE.
typedef GstPadProbeReturn (*cgst_probe_fn)(void *context, GstPad *pad, GstPadProbeInfo *info);
/// Adds a probe of `mask` on `pad`; `release` runs when the probe goes away.
gulong cgst_pad_add_probe(GstPad *pad, GstPadProbeType mask, cgst_probe_fn fn, void *context,
                          cgst_release_fn release);

/// A bus sync handler's callback; it must not unref the message (the shim drops and unrefs it).
typedef void (*cgst_bus_fn)(void *context, GstMessage *message);
/// Routes every message of `bus` to `fn` on the posting thread, then drops it.
void cgst_bus_set_sync_handler(GstBus *bus, cgst_bus_fn fn, void *context, cgst_release_fn release);

/// A settled promise's callback.
typedef void (*cgst_promise_fn)(void *context, GstPromise *promise);
/// A promise that calls `fn` when settled (owned reference).
GstPromise *cgst_promise_new(cgst_promise_fn fn, void *context, cgst_release_fn release);

/// Emits webrtcbin's `create-offer` (NULL options).
void cgst_webrtc_create_offer(GstElement *webrtc, GstPromise *promise);
/// Emits webrtcbin's `create-answer` (NULL options).
void cgst_webrtc_create_answer(GstElement *webrtc, GstPromise *promise);
/// Emits `set-local-description`.
void cgst_webrtc_set_local_description(GstElement *webrtc, GstWebRTCSessionDescription *desc, GstPromise *promise);
/// Emits `set-remote-description`.
void cgst_webrtc_set_remote_description(GstElement *webrtc, GstWebRTCSessionDescription *desc,
                                        GstPromise *promise);
/// Emits `add-ice-candidate`.
void cgst_webrtc_add_ice_candidate(GstElement *webrtc, guint mline, const char *candidate);
/// Emits `add-turn-server` with a `turn://` or `turns://` URL (user and password percent-escaped); whether the
/// URL was taken.
gboolean cgst_webrtc_add_turn_server(GstElement *webrtc, const char *url);

/// The description a `create-offer`/`create-answer` promise replied with (`field` "offer" or "answer"),
/// owned by the caller; NULL when the reply has none. On failure `*error_text` gets a newly allocated
/// message (free with g_free) when the reply carries an error.
GstWebRTCSessionDescription *cgst_promise_take_description(GstPromise *promise, const char *field,
                                                           char **error_text);
/// Whether a settled promise carries an error; `*error_text` as above.
gboolean cgst_promise_failed(GstPromise *promise, char **error_text);

/// Cumulative receive statistics of one webrtcbin, from its `get-stats` reply: per kind (0 audio, 1 video) the
/// inbound RTP packets received and lost, bytes received and the latest jitter, and the largest round trip any
/// remote-inbound report gives.
typedef struct {
    int has_inbound[2];
    double packets_received[2];
    double packets_lost[2];
    double bytes_received[2];
    double jitter_seconds[2];
    int has_round_trip;
    double round_trip_seconds;
} cgst_link_stats;

/// Asks `webrtc` for its statistics; `promise` is replied with them.
void cgst_webrtc_get_stats(GstElement *webrtc, GstPromise *promise);
/// Reads the statistics a replied `get-stats` promise carries into `out`; FALSE when it carries none.
gboolean cgst_promise_read_stats(GstPromise *promise, cgst_link_stats *out);

/// Parses SDP text into a description of `type` (offer or answer); NULL when it does not parse.
GstWebRTCSessionDescription *cgst_description_from_text(GstWebRTCSDPType type, const char *text);
/// The SDP text of a description (free with g_free).
char *cgst_description_to_text(const GstWebRTCSessionDescription *desc);

/// Sends an upstream force-key-unit request (all headers) on `pad`, the source pad of an encoder.
gboolean cgst_request_key_frame(GstPad *pad);

/// The buffer of a buffer probe, or NULL for other probe types.
GstBuffer *cgst_probe_buffer(GstPadProbeInfo *info);

/// GObject setters by type (g_object_set is variadic).
void cgst_set_bool(gpointer object, const char *name, gboolean value);
void cgst_set_double(gpointer object, const char *name, double value);
void cgst_set_int(gpointer object, const char *name, gint value);
void cgst_set_uint(gpointer object, const char *name, guint value);
void cgst_set_string(gpointer object, const char *name, const char *value);
/// Sets a caps-typed property from a caps string.
void cgst_set_caps(gpointer object, const char *name, const char *caps);

/// Casts, since the GStreamer type-check macros do not reach Swift.
GstElement *cgst_element(gpointer object);
GstBin *cgst_bin(gpointer object);
GstObject *cgst_object(gpointer object);
GstAppSrc *cgst_app_src(GstElement *element);
GstAppSink *cgst_app_sink(GstElement *element);

/// The error text of an ERROR/WARNING message with its source's name (free with g_free), or NULL.
char *cgst_message_error_text(GstMessage *message);
/// A message's type.
GstMessageType cgst_message_type(GstMessage *message);

/// Stops GLib's idle pool threads at once (they otherwise linger up to 15 s after use).
void cgst_stop_unused_threads(void);

#endif
