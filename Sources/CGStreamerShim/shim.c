#include "CGStreamerShim.h"
#include <string.h>

/* Every callback from GStreamer reaches Swift through a handler. The handler is published with a release
 * store and read with an acquire load: GLib hands the pointer from the registering thread to a streaming
 * thread through its own locks, which the thread sanitizer cannot see (GLib is not instrumented); the
 * atomic pair makes the hand-over, and everything written before it, visible to it. */
typedef struct {
    void *fn;
    void *context;
    cgst_release_fn release;
    int published;
} cgst_handler;

static cgst_handler *cgst_handler_new(void *fn, void *context, cgst_release_fn release) {
    cgst_handler *handler = g_new0(cgst_handler, 1);
    handler->fn = fn;
    handler->context = context;
    handler->release = release;
    __atomic_store_n(&handler->published, 1, __ATOMIC_RELEASE);
    return handler;
}

static cgst_handler *cgst_handler_get(gpointer data) {
    cgst_handler *handler = data;
    (void)__atomic_load_n(&handler->published, __ATOMIC_ACQUIRE);
    return handler;
}

static void cgst_handler_destroy(gpointer data) {
    cgst_handler *handler = cgst_handler_get(data);
    if (handler->release) handler->release(handler->context);
    g_free(handler);
}

static void cgst_handler_free(gpointer data, GClosure *closure) {
    (void)closure;
    cgst_handler_destroy(data);
}

static void cgst_on_ice_candidate(GstElement *webrtc, guint mline, gchar *candidate, gpointer data) {
    (void)webrtc;
    cgst_handler *handler = cgst_handler_get(data);
    ((cgst_ice_candidate_fn)handler->fn)(handler->context, mline, candidate);
}

static void cgst_on_pad_added(GstElement *element, GstPad *pad, gpointer data) {
    (void)element;
    cgst_handler *handler = cgst_handler_get(data);
    ((cgst_pad_added_fn)handler->fn)(handler->context, pad);
}

static GstPadProbeReturn cgst_on_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    cgst_handler *handler = cgst_handler_get(data);
    return ((cgst_probe_fn)handler->fn)(handler->context, pad, info);
}

gulong cgst_pad_add_probe(GstPad *pad, GstPadProbeType mask, cgst_probe_fn fn, void *context,
                          cgst_release_fn release) {
    return gst_pad_add_probe(pad, mask, cgst_on_probe, cgst_handler_new((void *)fn, context, release),
                             cgst_handler_destroy);
}

static GstBusSyncReply cgst_on_bus_message(GstBus *bus, GstMessage *message, gpointer data) {
    (void)bus;
    cgst_handler *handler = cgst_handler_get(data);
    ((cgst_bus_fn)handler->fn)(handler->context, message);
    /* A sync handler that drops a message owns it: each message holds a reference to the element that
     * posted it, so one not released keeps that element (a whole webrtcbin, threads and sockets) alive. */
    gst_message_unref(message);
    return GST_BUS_DROP;
}

void cgst_bus_set_sync_handler(GstBus *bus, cgst_bus_fn fn, void *context, cgst_release_fn release) {
    gst_bus_set_sync_handler(bus, cgst_on_bus_message, cgst_handler_new((void *)fn, context, release),
                             cgst_handler_destroy);
}

static void cgst_on_promise(GstPromise *promise, gpointer data) {
    cgst_handler *handler = cgst_handler_get(data);
    ((cgst_promise_fn)handler->fn)(handler->context, promise);
}

GstPromise *cgst_promise_new(cgst_promise_fn fn, void *context, cgst_release_fn release) {
    return gst_promise_new_with_change_func(cgst_on_promise, cgst_handler_new((void *)fn, context, release),
                                            cgst_handler_destroy);
}

gulong cgst_connect_ice_candidate(GstElement *webrtc, cgst_ice_candidate_fn fn, void *context,
                                  cgst_release_fn release) {
    return g_signal_connect_data(webrtc, "on-ice-candidate", G_CALLBACK(cgst_on_ice_candidate),
                                 cgst_handler_new((void *)fn, context, release), cgst_handler_free, 0);
}

gulong cgst_connect_pad_added(GstElement *element, cgst_pad_added_fn fn, void *context, cgst_release_fn release) {
    return g_signal_connect_data(element, "pad-added", G_CALLBACK(cgst_on_pad_added),
                                 cgst_handler_new((void *)fn, context, release), cgst_handler_free, 0);
}

void cgst_webrtc_create_offer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
}

void cgst_webrtc_create_answer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-answer", NULL, promise);
}

void cgst_webrtc_set_local_description(GstElement *webrtc, GstWebRTCSessionDescription *desc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "set-local-description", desc, promise);
}

void cgst_webrtc_set_remote_description(GstElement *webrtc, GstWebRTCSessionDescription *desc,
                                        GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "set-remote-description", desc, promise);
}

void cgst_webrtc_add_ice_candidate(GstElement *webrtc, guint mline, const char *candidate) {
    g_signal_emit_by_name(webrtc, "add-ice-candidate", mline, candidate);
}

gboolean cgst_webrtc_add_turn_server(GstElement *webrtc, const char *url) {
    gboolean added = FALSE;
    g_signal_emit_by_name(webrtc, "add-turn-server", url, &added);
    return added;
}

static char *cgst_reply_error(const GstStructure *reply) {
    if (!reply || !gst_structure_has_field(reply, "error")) return NULL;
    GError *error = NULL;
    gst_structure_get(reply, "error", G_TYPE_ERROR, &error, NULL);
    if (!error) return g_strdup("unknown error");
    char *text = g_strdup(error->message);
    g_error_free(error);
    return text;
}

GstWebRTCSessionDescription *cgst_promise_take_description(GstPromise *promise, const char *field,
                                                           char **error_text) {
    if (error_text) *error_text = NULL;
    if (gst_promise_wait(promise) != GST_PROMISE_RESULT_REPLIED) {
        if (error_text) *error_text = g_strdup("promise not replied");
        return NULL;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    GstWebRTCSessionDescription *desc = NULL;
    if (reply && gst_structure_has_field(reply, field)) {
        gst_structure_get(reply, field, GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &desc, NULL);
    }
    if (!desc && error_text) {
        *error_text = cgst_reply_error(reply);
        if (!*error_text) *error_text = g_strdup("no description in reply");
    }
    return desc;
}

gboolean cgst_promise_failed(GstPromise *promise, char **error_text) {
    if (error_text) *error_text = NULL;
    GstPromiseResult result = gst_promise_wait(promise);
    if (result != GST_PROMISE_RESULT_REPLIED) {
        if (result == GST_PROMISE_RESULT_INTERRUPTED || result == GST_PROMISE_RESULT_EXPIRED) {
            if (error_text) *error_text = g_strdup("promise interrupted");
            return TRUE;
        }
        return FALSE;
    }
    char *text = cgst_reply_error(gst_promise_get_reply(promise));
    if (!text) return FALSE;
    if (error_text) *error_text = text; else g_free(text);
    return TRUE;
}

GstWebRTCSessionDescription *cgst_description_from_text(GstWebRTCSDPType type, const char *text) {
    GstSDPMessage *sdp = NULL;
    if (gst_sdp_message_new_from_text(text, &sdp) != GST_SDP_OK) {
        if (sdp) gst_sdp_message_free(sdp);
        return NULL;
    }
    return gst_webrtc_session_description_new(type, sdp);
}

char *cgst_description_to_text(const GstWebRTCSessionDescription *desc) {
    return gst_sdp_message_as_text(desc->sdp);
}

gboolean cgst_request_key_frame(GstPad *pad) {
    GstStructure *s = gst_structure_new("GstForceKeyUnit", "all-headers", G_TYPE_BOOLEAN, TRUE, NULL);
    return gst_pad_send_event(pad, gst_event_new_custom(GST_EVENT_CUSTOM_UPSTREAM, s));
}

GstBuffer *cgst_probe_buffer(GstPadProbeInfo *info) {
    return (info->type & GST_PAD_PROBE_TYPE_BUFFER) ? GST_PAD_PROBE_INFO_BUFFER(info) : NULL;
}

void cgst_set_bool(gpointer object, const char *name, gboolean value) { g_object_set(object, name, value, NULL); }
void cgst_set_double(gpointer object, const char *name, double value) { g_object_set(object, name, value, NULL); }
void cgst_set_int(gpointer object, const char *name, gint value) { g_object_set(object, name, value, NULL); }
void cgst_set_uint(gpointer object, const char *name, guint value) { g_object_set(object, name, value, NULL); }
void cgst_set_string(gpointer object, const char *name, const char *value) {
    g_object_set(object, name, value, NULL);
}
void cgst_set_caps(gpointer object, const char *name, const char *caps) {
    GstCaps *parsed = gst_caps_from_string(caps);
    g_object_set(object, name, parsed, NULL);
    if (parsed) gst_caps_unref(parsed);
}

GstElement *cgst_element(gpointer object) { return GST_ELEMENT(object); }
GstBin *cgst_bin(gpointer object) { return GST_BIN(object); }
GstObject *cgst_object(gpointer object) { return GST_OBJECT(object); }
GstAppSrc *cgst_app_src(GstElement *element) { return GST_APP_SRC(element); }
GstAppSink *cgst_app_sink(GstElement *element) { return GST_APP_SINK(element); }

char *cgst_message_error_text(GstMessage *message) {
    GError *error = NULL;
    gchar *debug = NULL;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
        gst_message_parse_error(message, &error, &debug);
    } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_WARNING) {
        gst_message_parse_warning(message, &error, &debug);
    } else {
        return NULL;
    }
    char *text = g_strdup_printf("%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(message)),
                                 error ? error->message : "unknown");
    if (error) g_error_free(error);
    g_free(debug);
    return text;
}

GstMessageType cgst_message_type(GstMessage *message) { return GST_MESSAGE_TYPE(message); }

void cgst_stop_unused_threads(void) { g_thread_pool_stop_unused_threads(); }

void cgst_webrtc_get_stats(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "get-stats", NULL, promise);
}

/* A numeric field as a double, whatever integer or floating type this GStreamer gives it. */
static gboolean cgst_field_double(const GstStructure *s, const char *name, double *out) {
    const GValue *value = gst_structure_get_value(s, name);
    if (!value) return FALSE;
    GValue converted = G_VALUE_INIT;
    g_value_init(&converted, G_TYPE_DOUBLE);
    gboolean ok = g_value_transform(value, &converted);
    if (ok) *out = g_value_get_double(&converted);
    g_value_unset(&converted);
    return ok;
}

typedef struct {
    const GstStructure *reply;
    cgst_link_stats *out;
} cgst_stats_walk;

static gboolean cgst_stats_entry(GQuark field, const GValue *value, gpointer data) {
    (void)field;
    cgst_stats_walk *walk = data;
    if (!GST_VALUE_HOLDS_STRUCTURE(value)) return TRUE;
    const GstStructure *s = gst_value_get_structure(value);
    GstWebRTCStatsType type = 0;
    if (!gst_structure_get_enum(s, "type", GST_TYPE_WEBRTC_STATS_TYPE, (gint *)&type)) return TRUE;
    if (type == GST_WEBRTC_STATS_INBOUND_RTP) {
        /* The stats name the kind (GStreamer 1.22); without it, the codec's clock rate says it (90 kHz: video). */
        int kind = 0;
        const char *kind_name = gst_structure_get_string(s, "kind");
        const char *codec_id = gst_structure_get_string(s, "codec-id");
        const GValue *codec_value = codec_id ? gst_structure_get_value(walk->reply, codec_id) : NULL;
        if (kind_name) {
            kind = strcmp(kind_name, "video") == 0;
        } else if (codec_value && GST_VALUE_HOLDS_STRUCTURE(codec_value)) {
            double clock_rate = 0;
            if (cgst_field_double(gst_value_get_structure(codec_value), "clock-rate", &clock_rate) &&
                clock_rate >= 90000)
                kind = 1;
        }
        double number = 0;
        walk->out->has_inbound[kind] = 1;
        if (cgst_field_double(s, "packets-received", &number)) walk->out->packets_received[kind] += number;
        if (cgst_field_double(s, "packets-lost", &number) && number > 0) walk->out->packets_lost[kind] += number;
        if (cgst_field_double(s, "bytes-received", &number)) walk->out->bytes_received[kind] += number;
        if (cgst_field_double(s, "jitter", &number) && number > walk->out->jitter_seconds[kind])
            walk->out->jitter_seconds[kind] = number;
    } else if (type == GST_WEBRTC_STATS_REMOTE_INBOUND_RTP) {
        double rtt = 0;
        if (cgst_field_double(s, "round-trip-time", &rtt) && rtt > 0) {
            walk->out->has_round_trip = 1;
            if (rtt > walk->out->round_trip_seconds) walk->out->round_trip_seconds = rtt;
        }
    }
    return TRUE;
}

gboolean cgst_promise_read_stats(GstPromise *promise, cgst_link_stats *out) {
    memset(out, 0, sizeof(*out));
    if (gst_promise_wait(promise) != GST_PROMISE_RESULT_REPLIED) return FALSE;
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (!reply) return FALSE;
    cgst_stats_walk walk = {reply, out};
    gst_structure_foreach(reply, cgst_stats_entry, &walk);
    return TRUE;
}
