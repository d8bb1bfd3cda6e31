// AvroOracle: Apache Avro's Java library (the reference implementation) behind a JSON-lines
// protocol, so roastedavro's tests can compare thousands of cases with one JVM.
//
// Each line on stdin is one request object, or a JSON array of requests (a batch); each gets one
// line on stdout: the response object, or the array of responses in order. Schemas are sent as
// schema JSON text ("\"long\"", "{\"type\": ...}"); a JSON object or array in their place is taken
// as that schema.
//
//   {"op":"parse", "schema":S}           a fresh Schema.Parser() (default settings: name and
//                                        default validation on) -> {"ok":true,"full":toString(),
//                                        "logical":null or the root's logical type as
//                                        {"name":..} (decimals: "precision", "scale")}
//   {"op":"parse_many", "schemas":[S..]} one Parser for all, in order (named types shared)
//                                        -> {"ok":true,"results":[parse results]}; stops after
//                                        the first failure (the Parser keeps half-parsed names)
//   {"op":"canonical", "schema":S}       -> {"ok":true,"canonical":SchemaNormalization.toParsingForm}
//   {"op":"fingerprints", "schema":S}    -> {"ok":true,"crc64":"<unsigned decimal>","md5":hex,"sha256":hex}
//   {"op":"roundtrip", "schema":S, "data":base64}
//        GenericDatumReader, then GenericDatumWriter on a binary encoder -> {"ok":true,
//        "data":base64 of the re-encoding, "datum":GenericData.toString, "json":Avro JSON encoding,
//        "trailing":bytes left unread}. Maps keep the order of their keys.
//   {"op":"roundtrip_single", "schema":S, "data":base64}
//        the same for a single-object encoded message (C3 01, fingerprint, datum), read with
//        BinaryMessageDecoder (which checks marker and fingerprint) and written with
//        BinaryMessageEncoder -> {"ok":true,"data":base64,"datum":..,"trailing":..}
//   {"op":"encode_json", "schema":S, "json":text}
//        the datum in Avro's JSON encoding (JsonDecoder) -> {"ok":true,"data":base64}
//   {"op":"resolve", "writer":S, "reader":S, "data":base64}
//        GenericDatumReader(writer, reader) reads the bytes, GenericDatumWriter(reader) writes what
//        it read -> the same fields as "roundtrip" (the re-encoding is in the reader's schema)
//   {"op":"compatibility", "reader":S, "writer":S}
//        SchemaCompatibility.checkReaderWriterCompatibility -> {"ok":true,"compatible":bool,
//        "incompatibilities":[{"type":..,"location":..,"message":..}, ...]} in Java's order
//
// A request that fails answers {"ok":false,"kind":"<exception class>","error":"<message>"}; the
// loop goes on. An "id" in a request is echoed. End of input ends the program.
//
// Build and run: python scripts/java/fetch.py (downloads the jars, compiles this file).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.io.JsonEncoder;

public final class AvroOracle {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int CACHED_SCHEMAS = 4096;

  // parsed schemas for the data and canonical-form operations, by their text (least recently used
  // dropped first); "parse" always parses afresh
  private static final Map<String, Schema> SCHEMAS =
      new LinkedHashMap<String, Schema>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Schema> eldest) {
          return size() > CACHED_SCHEMAS;
        }
      };

  public static void main(String[] args) throws Exception {
    // deeply nested test schemas recurse deeply in the parser and the datum reader
    Thread worker = new Thread(null, AvroOracle::serve, "oracle", 256L << 20);
    worker.start();
    worker.join();
  }

  private static void serve() {
    try {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) continue;
        JsonNode answer;
        try {
          JsonNode request = JSON.readTree(line);
          if (request.isArray()) {
            ArrayNode answers = JSON.createArrayNode();
            for (JsonNode one : request) answers.add(answer(one));
            answer = answers;
          } else {
            answer = answer(request);
          }
        } catch (Throwable e) { // a line that is not JSON
          answer = failure(e);
        }
        out.println(JSON.writeValueAsString(answer));
        out.flush();
      }
    } catch (Exception e) {
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static ObjectNode answer(JsonNode request) {
    ObjectNode response;
    try {
      response = handle(request);
      if (!response.has("ok")) response.put("ok", true);
    } catch (Throwable e) { // StackOverflowError included: the JVM goes on
      response = failure(e);
    }
    if (request.has("id")) response.set("id", request.get("id"));
    return response;
  }

  private static ObjectNode failure(Throwable e) {
    ObjectNode response = JSON.createObjectNode();
    response.put("ok", false);
    response.put("kind", e.getClass().getName());
    response.put("error", String.valueOf(e.getMessage()));
    return response;
  }

  private static String schemaText(JsonNode node) {
    if (node == null || node.isNull()) throw new IllegalArgumentException("request has no schema");
    return node.isTextual() ? node.textValue() : node.toString();
  }

  private static Schema schema(JsonNode node) {
    String text = schemaText(node);
    Schema schema = SCHEMAS.get(text);
    if (schema == null) {
      schema = new Schema.Parser().parse(text);
      SCHEMAS.put(text, schema);
    }
    return schema;
  }

  private static String text(JsonNode request, String key) {
    JsonNode node = request.get(key);
    if (node == null || !node.isTextual()) throw new IllegalArgumentException("request has no text \"" + key + "\"");
    return node.textValue();
  }

  private static ObjectNode parsed(Schema.Parser parser, String text) {
    ObjectNode result = JSON.createObjectNode();
    try {
      Schema schema = parser.parse(text);
      result.put("full", schema.toString());
      LogicalType logical = schema.getLogicalType();
      if (logical == null) {
        result.putNull("logical");
      } else {
        ObjectNode described = result.putObject("logical");
        described.put("name", logical.getName());
        if (logical instanceof LogicalTypes.Decimal) {
          described.put("precision", ((LogicalTypes.Decimal) logical).getPrecision());
          described.put("scale", ((LogicalTypes.Decimal) logical).getScale());
        }
      }
      result.put("ok", true);
    } catch (Throwable e) {
      result = failure(e);
    }
    return result;
  }

  private static ObjectNode handle(JsonNode request) throws Exception {
    ObjectNode response = JSON.createObjectNode();
    String op = text(request, "op");
    switch (op) {
      case "parse": {
        ObjectNode result = parsed(new Schema.Parser(), schemaText(request.get("schema")));
        return result;
      }
      case "parse_many": {
        Schema.Parser parser = new Schema.Parser();
        ArrayNode results = response.putArray("results");
        for (JsonNode one : request.path("schemas")) {
          ObjectNode result = parsed(parser, schemaText(one));
          results.add(result);
          if (!result.get("ok").booleanValue()) break;
        }
        return response;
      }
      case "canonical":
        response.put("canonical", SchemaNormalization.toParsingForm(schema(request.get("schema"))));
        return response;
      case "fingerprints": {
        Schema schema = schema(request.get("schema"));
        response.put("crc64", Long.toUnsignedString(SchemaNormalization.parsingFingerprint64(schema)));
        response.put("md5", hex(SchemaNormalization.parsingFingerprint("MD5", schema)));
        response.put("sha256", hex(SchemaNormalization.parsingFingerprint("SHA-256", schema)));
        return response;
      }
      case "roundtrip": {
        Schema schema = schema(request.get("schema"));
        byte[] data = Base64.getDecoder().decode(text(request, "data"));
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, null);
        Object datum = reader(schema).read(null, decoder);
        int trailing = decoder.inputStream().available();

        ByteArrayOutputStream binary = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(binary, null);
        new GenericDatumWriter<Object>(schema, ORDERED_MAPS).write(datum, encoder);
        encoder.flush();

        ByteArrayOutputStream json = new ByteArrayOutputStream();
        JsonEncoder jsonEncoder = EncoderFactory.get().jsonEncoder(schema, json);
        new GenericDatumWriter<Object>(schema, ORDERED_MAPS).write(datum, jsonEncoder);
        jsonEncoder.flush();

        response.put("data", Base64.getEncoder().encodeToString(binary.toByteArray()));
        response.put("datum", ORDERED_MAPS.toString(datum));
        response.put("json", json.toString(StandardCharsets.UTF_8));
        response.put("trailing", trailing);
        return response;
      }
      case "roundtrip_single": {
        Schema schema = schema(request.get("schema"));
        byte[] data = Base64.getDecoder().decode(text(request, "data"));
        Object datum = new BinaryMessageDecoder<Object>(ORDERED_MAPS, schema).decode(data);
        // the datum's bytes once more, to count what the message decoder leaves unread
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, 10, Math.max(0, data.length - 10), null);
        reader(schema).read(null, decoder);
        ByteBuffer written = new BinaryMessageEncoder<Object>(ORDERED_MAPS, schema).encode(datum);
        byte[] out = new byte[written.remaining()];
        written.get(out);
        response.put("data", Base64.getEncoder().encodeToString(out));
        response.put("datum", ORDERED_MAPS.toString(datum));
        response.put("trailing", decoder.inputStream().available());
        return response;
      }
      case "encode_json": {
        Schema schema = schema(request.get("schema"));
        Object datum = reader(schema).read(null, DecoderFactory.get().jsonDecoder(schema, text(request, "json")));
        ByteArrayOutputStream binary = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(binary, null);
        new GenericDatumWriter<Object>(schema, ORDERED_MAPS).write(datum, encoder);
        encoder.flush();
        response.put("data", Base64.getEncoder().encodeToString(binary.toByteArray()));
        return response;
      }
      case "resolve": {
        Schema writer = schema(request.get("writer"));
        Schema reader = schema(request.get("reader"));
        byte[] data = Base64.getDecoder().decode(text(request, "data"));
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, null);
        Object datum = new GenericDatumReader<Object>(writer, reader, ORDERED_MAPS).read(null, decoder);
        int trailing = decoder.inputStream().available();
        ByteArrayOutputStream binary = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(binary, null);
        new GenericDatumWriter<Object>(reader, ORDERED_MAPS).write(datum, encoder);
        encoder.flush();
        ByteArrayOutputStream json = new ByteArrayOutputStream();
        JsonEncoder jsonEncoder = EncoderFactory.get().jsonEncoder(reader, json);
        new GenericDatumWriter<Object>(reader, ORDERED_MAPS).write(datum, jsonEncoder);
        jsonEncoder.flush();
        response.put("data", Base64.getEncoder().encodeToString(binary.toByteArray()));
        response.put("datum", ORDERED_MAPS.toString(datum));
        response.put("json", json.toString(StandardCharsets.UTF_8));
        response.put("trailing", trailing);
        return response;
      }
      case "compatibility": {
        SchemaCompatibility.SchemaPairCompatibility pair = SchemaCompatibility.checkReaderWriterCompatibility(
            schema(request.get("reader")), schema(request.get("writer")));
        response.put("compatible",
            pair.getType() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
        ArrayNode reasons = response.putArray("incompatibilities");
        for (SchemaCompatibility.Incompatibility reason : pair.getResult().getIncompatibilities()) {
          ObjectNode one = reasons.addObject();
          one.put("type", reason.getType().name());
          one.put("location", reason.getLocation());
          one.put("message", reason.getMessage());
        }
        return response;
      }
      default:
        throw new IllegalArgumentException("unknown op " + op);
    }
  }

  // maps keep the order of their keys, so that writing what was read gives the same bytes
  // (a subclass of GenericData also keeps the reader off its fast path, which makes HashMaps)
  private static final GenericData ORDERED_MAPS = new GenericData() {
    @Override
    public Object newMap(Object old, int size) {
      return new LinkedHashMap<Object, Object>();
    }
  };

  private static GenericDatumReader<Object> reader(Schema schema) {
    return new GenericDatumReader<Object>(schema, schema, ORDERED_MAPS);
  }

  private static String hex(byte[] bytes) {
    StringBuilder text = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) text.append(Character.forDigit((b >> 4) & 15, 16)).append(Character.forDigit(b & 15, 16));
    return text.toString();
  }
}
