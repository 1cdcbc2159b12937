/**
 * The threat catalogue (shared/security/threats.md), sections A–D, as far as the command
 * policy decides them: every case asserts the stable error code and that `token` names the
 * culprit, for the catalogue's examples and for other spellings of the same attack.
 */
import { describe, expect, it } from "vitest";
import { argvOf, IN, refusalOf, SERVICE_PREFIX } from "./helpers";

const withInput = (tail: string) => `ffmpeg -i ${IN} ${tail}`;
const SUBS_ESCAPED = "'https\\://example.com/subs.srt'";

describe("A. reading local files through ffmpeg", () => {
  describe("1. local paths as inputs", () => {
    it.each(["/etc/passwd", "file:///etc/passwd", "FILE:///etc/passwd", "file:/etc/passwd", "../../etc/passwd", "etc/passwd", "~/secret.mp4", "'/etc/passwd'"])(
      "refuses the input %s",
      (url) => {
        const token = url.replace(/^'|'$/g, "");
        expect(refusalOf(`ffmpeg -i ${url} out.mp4`)).toMatchObject({ code: "INPUT_NOT_ALLOWED", status: 400, token });
      },
    );

    it.each([" https://example.com/a.mp4", "https://example.com/a.mp4 ", "https://example.com/a b.mp4", "\thttps://example.com/a.mp4", "https://example.com/\u0001.mp4"])(
      "refuses an input URL with whitespace or control characters: %j",
      (url) => {
        expect(refusalOf(`ffmpeg -i '${url}' out.mp4`)).toMatchObject({ code: "INPUT_NOT_ALLOWED", token: url });
      },
    );

    it("accepts http and https URLs in any letter case", () => {
      expect(argvOf("ffmpeg -i HTTP://example.com/a.mp4 -i HttpS://example.com/b.mp4 out.mp4")).toContain("/job/in/1");
    });
  });

  describe("2. input protocols other than http(s)", () => {
    it.each([
      "concat:/etc/passwd|/etc/hosts", "data:text/plain;base64,QQ==", "pipe:0", "pipe:", "-", "tcp://10.0.0.1:1234", "udp://0.0.0.0:1234",
      "rtmp://host/live", "rtsp://host/stream", "ftp://host/a.mp4", "srt://host:9000", "gopher://host/a", "subfile,,start,0,end,10,,:/etc/passwd",
      "async:http://example.com/a.mp4", "cache:http://example.com/a.mp4", "crypto:http://example.com/a.mp4", "httpproxy://host/a",
      "hls+http://example.com/a.m3u8", "unix:/run/socket", "fd:3", "tee:a.mp4", "http:/example.com/a.mp4", "https:example.com/a.mp4",
    ])("refuses the input %s", (url) => {
      expect(refusalOf(`ffmpeg -i '${url}' out.mp4`)).toMatchObject({ code: "INPUT_NOT_ALLOWED", token: url });
    });
  });

  describe("3. the concat demuxer", () => {
    it("refuses -safe, which belongs to the service", () => {
      expect(refusalOf(`ffmpeg -f concat -safe 0 -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_RESERVED", token: "-safe" });
    });

    it("refuses -f concat even without -safe", () => {
      expect(refusalOf(`ffmpeg -f concat -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "concat" });
    });

    it.each(["https://example.com/list.ffconcat", "https://example.com/list.m3u8", "https://example.com/a.mpd", "https://example.com/LIST.M3U8?x=1"])(
      "refuses playlists and scripts as inputs: %s",
      (url) => {
        expect(refusalOf(`ffmpeg -i ${url} out.mp4`)).toMatchObject({ code: "INPUT_NOT_ALLOWED", token: url });
      },
    );
  });

  describe("4. filters that open files or sockets", () => {
    it.each([
      ["-vf movie=/etc/passwd", "movie"],
      ["-vf 'movie=filename=/etc/passwd'", "movie"],
      ["-vf movie@x=/etc/passwd", "movie"],
      [`-vf "'movie'=/etc/passwd"`, "movie"],
      ["-af amovie=/etc/passwd", "amovie"],
      ["-filter:a amovie=/etc/passwd", "amovie"],
      ["-filter_complex 'movie=/etc/passwd[m];[0:v][m]overlay'", "movie"],
      ["-lavfi 'amovie=/etc/passwd'", "amovie"],
      ["-vf sendcmd=f=/etc/passwd", "sendcmd"],
      ["-af asendcmd=c='0 volume 1'", "asendcmd"],
      ["-vf zmq", "zmq"],
      ["-af azmq=bind_address=tcp\\\\://0.0.0.0\\\\:5555", "azmq"],
      ["-vf lut3d=file=/etc/passwd", "lut3d"],
      ["-vf lut3d=/etc/passwd", "lut3d"],
      ["-vf lut1d=/etc/passwd", "lut1d"],
      ["-vf frei0r=distort0r", "frei0r"],
      ["-af ladspa=file=/usr/lib/ladspa/x.so", "ladspa"],
      ["-af lv2=plugin=urn:x", "lv2"],
      ["-vf drawtext=textfile=/etc/passwd", "drawtext"],
      ["-vf drawtext=fontfile=/etc/passwd:text=x", "drawtext"],
      ["-vf drawtext=/etc/passwd", "drawtext"],
      ["-vf drawtext=fontfile=font.ttf:text=x", "drawtext"],
      ["-vf drawtext=text=x:/textfile=/etc/passwd", "drawtext"],
      ["-vf 'drawtext=font=Sans\\\\\\:file=/etc/passwd'", "drawtext"],
      ["-vf subtitles=/etc/passwd", "subtitles"],
      ["-vf subtitles=filename=/etc/passwd", "subtitles"],
      [`-vf "subtitles=f='https\\://evil.example/s.srt'"`, "subtitles"],
      ["-vf ass=/etc/passwd", "ass"],
      ["-vf curves=psfile=/etc/passwd", "curves"],
      ["-vf curves=plot=/tmp/plot.gp", "curves"],
      ["-vf paletteuse=debug_kdtree=/tmp/k.dot", "paletteuse"],
      ["-vf removelogo=/etc/passwd", "removelogo"],
      ["-vf metadata=mode=print:file=/tmp/m.txt", "metadata"],
      ["-vf vidstabdetect=result=/tmp/t.trf", "vidstabdetect"],
      ["-af arnndn=m=/etc/passwd", "arnndn"],
      ["-vf life=f=/etc/passwd", "life"],
      ["-vf hwupload", "hwupload"],
      ["-vf frobnicate", "frobnicate"],
    ])("refuses %s", (option, filter) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", status: 400, token: filter });
    });

    it.each(["-filter_complex:v", "-lavfi:v", "-vf:v"])("refuses the stream-specifier spelling %s, which ffmpeg would read as the plain option", (option) => {
      expect(refusalOf(withInput(`${option} movie=/etc/passwd out.mp4`))).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: option });
    });

    it("allows subtitles= only on one of the task's own inputs, and points it at the local copy", () => {
      const subs = "https://example.com/subs.srt";
      expect(argvOf(withInput(`-i ${subs} -vf subtitles=${subs} out.mp4`))).toContain("subtitles=/job/in/1");
      expect(argvOf(withInput(`-i ${subs} -vf "subtitles=filename='${subs.replace(":", "\\:")}':force_style='Fontsize=24'" out.mp4`))).toContain(
        "subtitles=filename=/job/in/1:force_style=Fontsize=24",
      );
    });

    it("refuses subtitles= on a URL that is not an input", () => {
      expect(refusalOf(withInput("-vf subtitles=https://example.com/other.srt out.mp4"))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "subtitles" });
    });

    it.each([`filename=/etc/passwd:f=${SUBS_ESCAPED}`, `${SUBS_ESCAPED}:filename=/etc/passwd`])("refuses subtitles= naming its file twice: %s", (args) => {
      const subs = "https://example.com/subs.srt";
      expect(refusalOf(withInput(`-i ${subs} -vf "subtitles=${args}" out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "subtitles" });
    });

    it("refuses a subtitles fonts directory even on an input", () => {
      const subs = "https://example.com/subs.srt";
      expect(refusalOf(withInput(`-i ${subs} -vf subtitles=${subs}:fontsdir=/etc out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "subtitles" });
    });

    it("allows drawtext with an installed font family", () => {
      expect(argvOf(withInput("-vf drawtext=text=hi:font=DejaVu\\ Sans out.mp4"))).toContain("drawtext=text=hi:font=DejaVu\\ Sans");
    });
  });

  describe("5. options that read a file", () => {
    it.each([
      ["-filter_script /etc/passwd", "-filter_script"],
      ["-filter_script:v /etc/passwd", "-filter_script:v"],
      ["-filter_complex_script /etc/passwd", "-filter_complex_script"],
      ["-/filter_complex /etc/passwd", "-/filter_complex"],
      ["-/vf /etc/passwd", "-/vf"],
      ["-attach /etc/passwd", "-attach"],
      ["-fpre /etc/passwd", "-fpre"],
      ["-vpre slow", "-vpre"],
    ])("refuses %s", (option, token) => {
      expect(refusalOf(withInput(`${option} out.mkv`))).toMatchObject({ code: "OPTION_NOT_ALLOWED", token });
    });

    it("refuses encoder parameters that read or write files", () => {
      expect(refusalOf(withInput("-c:v libx264 -x264-params stats=/tmp/s.log out.mp4"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "stats=/tmp/s.log" });
      expect(refusalOf(withInput("-c:v libx265 -x265-params csv=/tmp/x.csv out.mp4"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "csv=/tmp/x.csv" });
      expect(refusalOf(withInput("-c:v libx265 -x265-params keyint=48:analysis-save=/tmp/a out.mp4"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED" });
    });
  });

  describe("6. input formats that are devices or generators", () => {
    it.each(["lavfi", "v4l2", "video4linux2", "x11grab", "fbdev", "alsa", "pulse", "jack", "oss", "dshow", "avfoundation", "gdigrab", "kmsgrab", "openal", "libcdio", "concat", "hls", "dash", "tee", "sdp", "rtp", "ffmetadata"])(
      "refuses -f %s before an input",
      (format) => {
        expect(refusalOf(`ffmpeg -f ${format} -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: format });
      },
    );

    it("refuses stream-specifier spellings of -f", () => {
      expect(refusalOf(`ffmpeg -f:v lavfi -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-f:v" });
    });

    it.each([
      ["-init_hw_device vaapi=gpu:/dev/dri/renderD128", "-init_hw_device"],
      ["-hwaccel cuda", "-hwaccel"],
      ["-hwaccel_device /dev/dri/renderD128", "-hwaccel_device"],
      ["-vaapi_device /dev/dri/renderD128", "-vaapi_device"],
      ["-filter_hw_device gpu", "-filter_hw_device"],
    ])("refuses the hardware option %s", (option, token) => {
      expect(refusalOf(`ffmpeg ${option} -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_NOT_ALLOWED", token });
    });

    it.each(["h264_nvenc", "h264_vaapi", "hevc_qsv", "h264_v4l2m2m", "h264_omx"])("refuses the hardware encoder %s", (encoder) => {
      expect(refusalOf(withInput(`-c:v ${encoder} out.mp4`))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: encoder });
    });

    it("refuses source filters in a filter graph unless bounded", () => {
      expect(refusalOf(withInput("-filter_complex testsrc -map 0 out.mp4"))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "testsrc" });
      expect(argvOf(withInput("-filter_complex testsrc=d=1[t] -map [t] out.mp4"))).toContain("testsrc=d=1[t]");
    });
  });

  describe("7. media files that are really playlists (probed by the transcoder)", () => {
    it("runs every input through the file protocol only, on its local copy", () => {
      const argv = argvOf(`ffmpeg -i ${IN} -i https://example.com/b.mp4 out.mp4`);
      expect(argv.slice(6, 14)).toEqual(["-protocol_whitelist", "file", "-i", "/job/in/0", "-protocol_whitelist", "file", "-i", "/job/in/1"]);
    });

    it("refuses -allowed_extensions, which would widen what an HLS playlist may open", () => {
      expect(refusalOf(`ffmpeg -allowed_extensions ALL -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_RESERVED", token: "-allowed_extensions" });
    });
  });
});

describe("B. writing where it should not", () => {
  describe("8. output names that are paths or tricks", () => {
    it.each([
      "/tmp/x.mp4", "../x.mp4", "a/../../x.mp4", "sub/x.mp4", "a\\x.mp4", ".hidden", ".hidden.mp4", "x..mp4", "x.mp4\u0001",
      "x\u202e4pm.exe", "\u00e9t\u00e9.mp4", `${"a".repeat(300)}.mp4`, "x.exe", "x", "x.mp4.sh", "x%s.mp4", "%Y-%m-%d.jpg",
      "thumb_%3d.jpg", "a%d_%d.jpg", "x.%d", "x y.mp4", "x;id.mp4",
    ])("refuses the output name %j", (name) => {
      expect(refusalOf(withInput(`'${name}'`))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", status: 400, token: name });
    });

    it("refuses an output named like an input", () => {
      expect(refusalOf(withInput("-c copy video.mp4"))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: "video.mp4" });
    });

    it("refuses the same output twice", () => {
      expect(refusalOf(withInput("a.mp4 -c copy a.mp4"))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: "a.mp4" });
    });

    it.each([
      ["-f hls -hls_segment_filename ../seg_%03d.ts index.m3u8", "../seg_%03d.ts"],
      ["-f hls -hls_segment_filename /tmp/seg_%03d.ts index.m3u8", "/tmp/seg_%03d.ts"],
      ["-f hls -hls_segment_filename index.m3u8 index.m3u8", "index.m3u8"],
      ["-f hls -master_pl_name ../master.m3u8 index.m3u8", "../master.m3u8"],
      ["-f hls -hls_segment_type fmp4 -hls_fmp4_init_filename /tmp/init.mp4 index.m3u8", "/tmp/init.mp4"],
      ["-f segment -segment_list /tmp/list.m3u8 seg_%03d.ts", "/tmp/list.m3u8"],
    ])("refuses files written by muxer options outside the output folder: %s", (tail, token) => {
      expect(refusalOf(withInput(tail))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token });
    });
  });

  describe("9. outputs that are URLs or multiplexers", () => {
    it.each(["udp://host:1234", "http://example.com/u.mp4", "rtmp://host/live", "file:out.mp4", "FILE:out.mp4", "pipe:1", "-"])(
      "refuses the output %s",
      (name) => {
        expect(refusalOf(withInput(`-f mpegts ${name}`))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: name });
      },
    );

    it("refuses -method before an output URL", () => {
      expect(refusalOf(withInput("-method PUT http://h/u"))).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-method" });
    });

    it.each([["tee"], ["fifo"], ["rtp"], ["rtsp"], ["null"], ["image2pipe"]])("refuses -f %s for an output", (format) => {
      expect(refusalOf(withInput(`-f ${format} "a.mp4|[f=mpegts]udp://10.0.0.1:1234"`))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: format });
    });

    it.each(["-headers", "-user_agent", "-cookies", "-listen", "-timeout", "-rw_timeout", "-reconnect", "-http_proxy", "-hls_base_url"])(
      "refuses the network option %s",
      (option) => {
        expect(refusalOf(withInput(`${option} 1 out.mp4`))).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: option });
      },
    );
  });

  describe("10. options that write files the service did not ask for", () => {
    it.each([
      ["-progress http://example.com/p", "-progress", "OPTION_RESERVED"],
      ["-progress /tmp/p", "-progress", "OPTION_RESERVED"],
      ["-report", "-report", "OPTION_RESERVED"],
      ["-vstats", "-vstats", "OPTION_NOT_ALLOWED"],
      ["-vstats_file /tmp/v", "-vstats_file", "OPTION_NOT_ALLOWED"],
      ["-passlogfile /tmp/p", "-passlogfile", "OPTION_NOT_ALLOWED"],
      ["-pass 1", "-pass", "OPTION_NOT_ALLOWED"],
      ["-dump_attachment:t out.ttf", "-dump_attachment:t", "OPTION_NOT_ALLOWED"],
      ["-sdp_file /tmp/s.sdp", "-sdp_file", "OPTION_NOT_ALLOWED"],
      ["-hls_enc 1", "-hls_enc", "OPTION_NOT_ALLOWED"],
      ["-hls_key_info_file /etc/passwd", "-hls_key_info_file", "OPTION_NOT_ALLOWED"],
      ["-segment_header_filename /tmp/h", "-segment_header_filename", "OPTION_NOT_ALLOWED"],
    ])("refuses %s", (option, token, code) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code, token });
    });

    it("refuses setting FFREPORT in front of the command", () => {
      expect(refusalOf(`FFREPORT=file=/tmp/r.log ffmpeg -i ${IN} out.mp4`)).toMatchObject({ code: "PROGRAM_NOT_ALLOWED", token: "FFREPORT=file=/tmp/r.log" });
    });

    it("adds its own -progress pipe:1 and nothing else of the kind", () => {
      const argv = argvOf(withInput("out.mp4"));
      expect(argv.slice(0, 6)).toEqual(SERVICE_PREFIX);
      expect(argv.filter((word) => word === "-progress")).toHaveLength(1);
    });
  });

  describe("11. reserved options belong to the service", () => {
    it.each([
      "-protocol_whitelist file,http,tcp", "-protocol_blacklist none", "-safe 0", "-allowed_extensions ALL", "-n", "-nostdin", "-stdin",
      "-stats", "-stats_period 0.1", "-timelimit 99999",
    ])("refuses %s", (option) => {
      expect(refusalOf(`ffmpeg ${option} -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_RESERVED", token: option.split(" ")[0] });
    });

    it("drops -y, -hide_banner and -nostats and keeps only the service's own, at their fixed places", () => {
      const argv = argvOf(`ffmpeg -y -hide_banner -nostats -i ${IN} -y out.mp4`);
      expect(argv).toEqual([...SERVICE_PREFIX, "-protocol_whitelist", "file", "-i", "/job/in/0", "/job/out/out.mp4"]);
    });
  });

  describe("12. segment, HLS and image-sequence outputs (counts and bytes capped by the transcoder)", () => {
    it.each([
      ["-vf fps=1 thumb_%04d.jpg", "/job/out/thumb_%04d.jpg"],
      ["-c copy -f segment -segment_time 2 seg_%03d.ts", "/job/out/seg_%03d.ts"],
      ["-f hls -hls_time 2 -hls_segment_filename seg_%03d.ts index.m3u8", "/job/out/seg_%03d.ts"],
    ])("allows %s", (tail, path) => {
      expect(argvOf(withInput(tail))).toContain(path);
    });

    it.each(["-strftime 1", "-use_localtime 1", "-strftime_mkdir 1"])("refuses %s, whose file names the service cannot predict", (option) => {
      expect(refusalOf(withInput(`-f hls ${option} index.m3u8`))).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: option.split(" ")[0] });
    });
  });
});

describe("C. exhausting resources", () => {
  describe("13. endless inputs and huge durations", () => {
    it.each([
      [`-stream_loop -1 -i ${IN} out.mp4`, "-1"],
      [`-stream_loop 1000 -i ${IN} out.mp4`, "1000"],
      [`-i ${IN} -t 99999 out.mp4`, "99999"],
      [`-i ${IN} -t 10:00:00 out.mp4`, "10:00:00"],
      [`-t 4:00:00 -i ${IN} out.mp4`, "4:00:00"],
      [`-i ${IN} -to 20000 out.mp4`, "20000"],
      [`-i ${IN} -frames:v 10000000 out.mp4`, "10000000"],
      [`-i ${IN} -vframes 600000 out.mp4`, "600000"],
      [`-i ${IN} -segment_time 99999 -f segment s_%d.ts`, "99999"],
    ])("refuses %s", (command, token) => {
      expect(refusalOf(`ffmpeg ${command}`)).toMatchObject({ code: "LIMIT_EXCEEDED", token });
    });

    it.each([
      [`-loop 1 -i https://example.com/logo.png out.mp4`, "-loop"],
      [`-i ${IN} -af apad out.mp4`, "apad"],
      [`-i ${IN} -vf tpad=stop=-1 out.mp4`, "tpad"],
      [`-i ${IN} -filter_complex "anullsrc[a]" -map 0:v -map [a] out.mp4`, "anullsrc"],
      [`-i ${IN} -filter_complex "sine=d=0[a]" -map [a] out.m4a`, "sine"],
      [`-i ${IN} -filter_complex "color=c=red[v]" -map [v] a.mp4 -t 1 b.mp4`, "color"],
    ])("refuses a generator without end when an output has nothing to stop it: %s", (command, token) => {
      expect(refusalOf(`ffmpeg ${command}`)).toMatchObject({ code: "LIMIT_EXCEEDED", token });
    });

    it.each([
      `-loop 1 -t 5 -i https://example.com/logo.png out.mp4`,
      `-loop 1 -i https://example.com/logo.png -t 5 out.mp4`,
      `-loop 1 -i https://example.com/logo.png -frames:v 1 out.png`,
      `-loop 1 -i https://example.com/logo.png -i ${IN} -shortest out.mp4`,
      `-i ${IN} -af apad=pad_dur=2 out.mp4`,
      `-i ${IN} -filter_complex "anullsrc[a]" -map 0:v -map [a] -shortest out.mp4`,
    ])("accepts a generator that something stops: %s", (command) => {
      expect(argvOf(`ffmpeg ${command}`).length).toBeGreaterThan(SERVICE_PREFIX.length);
    });

    it.each([
      ["-vf loop=-1:1", "loop"],
      ["-af aloop=loop=-1:size=1000", "aloop"],
      ["-vf loop=loop=3:size=5000", "loop"],
      ["-vf tpad=stop=10000000", "tpad"],
      ["-vf tpad=stop_duration=99999", "tpad"],
      ["-filter_complex testsrc=d=99999", "testsrc"],
    ])("refuses the endless or huge filter %s", (option, filter) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
    });

    it("refuses -ignore_loop, which can loop an animated input forever", () => {
      expect(refusalOf(`ffmpeg -ignore_loop 0 -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-ignore_loop" });
    });
  });

  describe("14. decompression bombs and oversized work", () => {
    it.each([
      ["-vf scale=65535:65535", "scale"],
      ["-vf scale=w=65535:h=2", "scale"],
      ["-vf scale=30000x30000", "scale"],
      ["-vf scale=8192:8192", "scale"],
      ["-vf pad=20000:20000", "pad"],
      ["-vf pad=w=9000", "pad"],
      ["-vf loop=32767:1", "loop"],
      ["-vf zoompan=d=9999999", "zoompan"],
      ["-vf zoompan=s=10000x10000", "zoompan"],
      ["-vf tile=50x50", "tile"],
      ["-vf fps=100000", "fps"],
      ["-vf scale=2:2:threads=512", "scale"],
      ["-filter_complex color=s=20000x20000:d=1", "color"],
      ["-filter_complex smptebars=r=100000:d=1", "smptebars"],
      ["-af showwaves=s=65535x2", "showwaves"],
    ])("refuses the filter setting %s", (option, filter) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
    });

    it.each([
      ["-s 30000x30000", "30000x30000"],
      ["-s:v 9000x100", "9000x100"],
      ["-threads 512", "512"],
      ["-threads:v 17", "17"],
      ["-filter_complex_threads 512", "512"],
      ["-filter_threads 64", "64"],
      ["-r 100000", "100000"],
      ["-r 1000000/1", "1000000/1"],
    ])("refuses %s", (option, token) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token });
    });

    it("refuses oversized inputs declared with -s and -framerate", () => {
      expect(refusalOf(`ffmpeg -s 65535x65535 -i ${IN} out.mp4`)).toMatchObject({ code: "LIMIT_EXCEEDED", token: "65535x65535" });
      expect(refusalOf(`ffmpeg -framerate 100000 -i ${IN} out.mp4`)).toMatchObject({ code: "LIMIT_EXCEEDED", token: "100000" });
    });

    it("refuses encoder parameters that bypass the thread cap", () => {
      expect(refusalOf(withInput("-c:v libx265 -x265-params pools=512 out.mp4"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "pools=512" });
    });

    it("refuses a size it cannot read rather than guess", () => {
      expect(refusalOf(withInput("-s iw*2 out.mp4"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "iw*2" });
    });

    it("reads sizes with any separator, as ffmpeg does, and caps them", () => {
      expect(refusalOf(withInput("-s 64000*480 out.mp4"))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "64000*480" });
      expect(refusalOf(withInput("-s +99999x+99999 out.mp4"))).toMatchObject({ code: "LIMIT_EXCEEDED" });
    });
  });

  describe("15. wall-clock limit (enforced by the transcoder)", () => {
    it("refuses -timelimit, so only the service sets time limits", () => {
      expect(refusalOf(`ffmpeg -timelimit 1000000 -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_RESERVED", token: "-timelimit" });
    });
  });

  describe("16. outputs that would fill the disk (enforced by the transcoder)", () => {
    it("accepts -fs, which can only make an output smaller", () => {
      expect(argvOf(withInput("-fs 10M out.mp4"))).toEqual(expect.arrayContaining(["-fs", "10M"]));
    });
  });

  describe("17. huge commands", () => {
    it("answers 413 for a 1 MB command", () => {
      expect(refusalOf(withInput(`-metadata title=${"x".repeat(1024 * 1024)} out.mp4`))).toMatchObject({ code: "COMMAND_TOO_LONG", status: 413 });
    });

    it("refuses tens of thousands of arguments", () => {
      const command = withInput(`${"-an ".repeat(20_000)}out.mp4`);
      expect(refusalOf(command, { maxCommandLength: 1024 * 1024 })).toMatchObject({ code: "LIMIT_EXCEEDED", status: 400 });
    });

    it("refuses a hundred inputs and names the first one over the limit", () => {
      const inputs = Array.from({ length: 100 }, (_, index) => `-i https://example.com/${index}.mp4`).join(" ");
      expect(refusalOf(`ffmpeg ${inputs} out.mp4`)).toMatchObject({ code: "LIMIT_EXCEEDED", token: "https://example.com/10.mp4" });
    });

    it("refuses too many outputs", () => {
      const outputs = Array.from({ length: 30 }, (_, index) => `-c copy o${index}.mp4`).join(" ");
      expect(refusalOf(withInput(outputs))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "o20.mp4" });
    });

    it("refuses too many filters", () => {
      expect(refusalOf(withInput(`-vf ${Array(300).fill("null").join(",")} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "null" });
    });
  });
});

describe("D. shell and process", () => {
  describe("19. shell metacharacters", () => {
    it.each([
      ["out.mp4; id", ";"],
      ["out.mp4 && id", "&&"],
      ["out.mp4 | id", "|"],
      ["out.mp4 > /tmp/x", ">"],
      ["$(id).mp4", "$(id).mp4"],
      ["`id`.mp4", "`id`.mp4"],
      ["out.mp4\nid", "\n"],
    ])("refuses the unquoted %j", (tail, token) => {
      expect(refusalOf(withInput(tail))).toMatchObject({ code: "COMMAND_SHELL_OPERATOR", status: 400, token });
    });

    it.each(["out.mp4; id", "$(id).mp4", "`id`.mp4", "out.mp4 && id", "a|b.mp4", "out.mp4\nid.mp4"])(
      "takes the quoted %j literally, where the output-name rule refuses it",
      (name) => {
        expect(refusalOf(withInput(`'${name}'`))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: name });
      },
    );

    it.each([["sh -c 'ffmpeg -i x o.mp4'", "sh"], [`ffprobe -i ${IN}`, "ffprobe"], [`/usr/bin/ffmpeg -i ${IN} o.mp4`, "/usr/bin/ffmpeg"]])(
      "refuses the program in %s",
      (command, token) => {
        expect(refusalOf(command)).toMatchObject({ code: "PROGRAM_NOT_ALLOWED", token });
      },
    );
  });
});

describe("E. server-side request forgery in task inputs (cases 21, 24, 38, 39)", () => {
  it.each([
    ["http://0177.0.0.1/a.mp4", "URL_HOST_BLOCKED"], ["http://0x7f000001/a.mp4", "URL_HOST_BLOCKED"], ["http://2130706433/a.mp4", "URL_HOST_BLOCKED"],
    ["http://127.1/a.mp4", "URL_HOST_BLOCKED"], ["http://１２７.０.０.１/a.mp4", "URL_HOST_BLOCKED"], ["http://[::ffff:127.0.0.1]/a.mp4", "URL_HOST_BLOCKED"],
    ["http://[64:ff9b::a9fe:a9fe]/a.mp4", "URL_HOST_BLOCKED"], ["http://[2002:a9fe:a9fe::]/a.mp4", "URL_HOST_BLOCKED"], ["http://[::]/a.mp4", "URL_HOST_BLOCKED"],
    ["http://224.0.0.1/a.mp4", "URL_HOST_BLOCKED"], ["http://100.64.0.1/a.mp4", "URL_HOST_BLOCKED"], ["http://198.18.0.1/a.mp4", "URL_HOST_BLOCKED"],
    ["http://metadata.google.internal/a.mp4", "URL_HOST_BLOCKED"], ["http://nas.local/a.mp4", "URL_HOST_BLOCKED"], ["http://intranet/a.mp4", "URL_HOST_BLOCKED"],
    ["http://0x08080808/a.mp4", "URL_NOT_ALLOWED"], ["http://good.com@evil.com/a.mp4", "URL_NOT_ALLOWED"], ["http://example.com:8080/a.mp4", "URL_NOT_ALLOWED"],
  ])("refuses the input %s with %s, naming it", (url, code) => {
    expect(refusalOf(`ffmpeg -i '${url}' out.mp4`)).toMatchObject({ code, status: 400, token: url });
  });

  it("refuses a subtitles= source on a blocked host, since it must be one of the inputs", () => {
    const subs = "http://169.254.169.254/s.srt";
    expect(refusalOf(`ffmpeg -i ${IN} -i ${subs} -vf "subtitles='http\\://169.254.169.254/s.srt'" out.mp4`)).toMatchObject({ code: "URL_HOST_BLOCKED", token: subs });
  });
});

describe("F. numbers read as ffmpeg reads them (cases 40–42)", () => {
  describe("40. frame sizes, rates and threads in ffmpeg's number and expression syntax", () => {
    it.each([
      ["-vf scale=1e4:100", "scale"], ["-vf scale=0x7fff:100", "scale"], ["-vf 'scale=(65535):100'", "scale"], ["-vf scale=iw*100:ih", "scale"],
      ["-vf scale=w=2*ih*10:h=-2", "scale"], ["-vf scale=w=100:h=oh+1e5", "scale"], ["-vf scale=w=oh*100:h=720", "scale"], [`-vf "scale=w='if(gt(iw,0),1e5,1)':h=1"`, "scale"],
      ["-vf pad=iw*10:ih", "pad"], ["-vf pad=w=9e3:h=10", "pad"], ["-vf zscale=w=1e5:h=100", "zscale"], ["-vf zscale=20000:100", "zscale"],
      ["-vf rotate=0:ow=1e5", "rotate"], ["-vf rotate=a=0:out_w=iw*10", "rotate"], ["-vf 'rotate=0:oh=rotw(0)*10'", "rotate"],
      ["-vf fps=1e3", "fps"], ["-vf fps=0x7fff", "fps"], ["-vf 'framerate=fps=(1000)'", "framerate"], ["-vf scale=2:2:threads=1e3", "scale"],
      ["-vf zoompan=d=1e7", "zoompan"], ["-vf zoompan=d=on*1000", "zoompan"],
    ])("refuses %s", (option, filter) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
    });

    it.each([["-r 1e3", "1e3"], ["-r 0x7fff", "0x7fff"], ["-threads '(512)'", "(512)"], ["-threads 0x200", "0x200"], ["-threads 2*256", "2*256"], ["-s 9e3x100", undefined]])(
      "refuses %s",
      (option, token) => {
        const refusal = refusalOf(withInput(`${option} out.mp4`));
        expect(["LIMIT_EXCEEDED", "OPTION_VALUE_NOT_ALLOWED"]).toContain(refusal.code);
        if (token) expect(refusal).toMatchObject({ code: "LIMIT_EXCEEDED", token });
      },
    );

    it.each(["-vf 'scale=w=ld(0)*1000:h=100'", "-vf scale=w=foo:h=100", "-vf 'scale=w=random(0)*1e9:h=100'", "-vf pad=w=x*100:h=10"])(
      "refuses %s: an expression that cannot be bounded at submission",
      (option) => {
        expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED" });
      },
    );

    it.each([
      "-vf scale=iw/2:-2", "-vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2'", "-vf scale=-2:720", "-vf scale=iw*sar:ih", `-vf "scale='min(1280,iw)':-2"`,
      "-vf scale=w=1.28k:h=720", `-vf "pad='min(iw+20,8192)':'min(ih+20,8192)':10:10"`, `-vf "rotate=PI/6:ow='hypot(iw,ih)/2':oh=ow"`, "-vf 'rotate=PI/2:ow=rotw(PI/2):oh=roth(PI/2)'", "-vf zscale=w=1920:h=-2",
      "-vf fps=1e1", "-vf fps=30000/1001", "-r 2.5e1", "-threads '(4)'", "-vf zoompan=z=1.5:d=25:s=1280x720 -t 10",
    ])("accepts %s", (option) => {
      expect(() => argvOf(withInput(`${option} out.mp4`))).not.toThrow();
    });
  });

  describe("41. sample rates", () => {
    it.each([
      ["-af aresample=osr=1e8", "aresample"], ["-af aresample=1e8", "aresample"], ["-af aresample=out_sample_rate=0x7fffffff", "aresample"],
      ["-af 'aresample=(192001)'", "aresample"], ["-af asetrate=1e6", "asetrate"], ["-af asetrate=r=96k*4", "asetrate"],
    ])("refuses %s", (option, filter) => {
      expect(refusalOf(withInput(`${option} out.mp3`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
    });

    it.each([["-ar 1e8", "1e8"], ["-ar 0x7fffffff", "0x7fffffff"], ["-ar 1M", "1M"]])("refuses %s", (option, token) => {
      expect(refusalOf(withInput(`${option} out.mp3`))).toMatchObject({ code: "LIMIT_EXCEEDED", token });
    });

    it("refuses an audio source at 1e8 Hz", () => {
      expect(refusalOf(withInput("-filter_complex sine=r=1e8:d=1 out.mp3"))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "sine" });
    });

    it.each(["-ar 44.1k", "-ar 48000", "-af aresample=48k", "-af aresample=osr=2*24000"])("accepts %s", (option) => {
      expect(() => argvOf(withInput(`${option} out.mp3`))).not.toThrow();
    });
  });

  describe("42. delays, pads and loops that extend the duration", () => {
    it.each([
      ["-af adelay=999999999", "adelay"], ["-af adelay=1e9", "adelay"], ["-af 'adelay=delays=0|99999s'", "adelay"], ["-af adelay=100000000S", "adelay"],
      ["-af apad=pad_len=1e12", "apad"], ["-af apad=whole_len=0x7fffffffff", "apad"], ["-af apad=pad_dur=99999", "apad"],
      ["-vf tpad=stop=1e9", "tpad"], ["-vf 'tpad=start=(1000000)'", "tpad"], ["-vf tpad=stop_duration=99999", "tpad"],
      ["-vf loop=loop=1e3:size=1", "loop"], ["-vf loop=0x7fff:1", "loop"], ["-vf 'loop=10:size=(65535)'", "loop"], ["-af aloop=loop=1e6:size=1", "aloop"],
    ])("refuses %s", (option, filter) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
    });

    it.each(["-af adelay=0x1p30", "-af adelay=inf", "-af 'adelay=1000||0'", "-af adelay=-5", "-af 'adelay=1e3 s'"])("refuses %s, which it cannot read as ffmpeg would", (option) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "adelay" });
    });

    it("refuses -itsoffset beyond the duration cap", () => {
      expect(refusalOf(`ffmpeg -itsoffset 99999 -i ${IN} out.mp4`)).toMatchObject({ code: "LIMIT_EXCEEDED", token: "99999" });
    });

    it("treats an apad length that may be 0 as padding without end", () => {
      expect(refusalOf(withInput(`-af "apad=pad_len='if(gt(t,1),0,100)'" out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED" });
      expect(refusalOf(withInput("-af apad=pad_len=0 out.mp4"))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "apad" });
    });

    it.each(["-af 'adelay=1500|0|500'", "-af adelay=delays=1.5s:all=1", "-af adelay=48000S", "-af apad=pad_dur=2", "-af apad=pad_len=48k", "-vf tpad=stop=25:stop_mode=clone", "-vf loop=loop=3:size=10"])(
      "accepts %s",
      (option) => {
        expect(() => argvOf(withInput(`${option} out.mp4`))).not.toThrow();
      },
    );
  });
});

describe("G. encoder parameter strings read whole (case 43)", () => {
  it.each([
    ["-c:v libx264 -x264-params keyint=48=stats=/tmp/x", "keyint=48=stats=/tmp/x"],
    ["-c:v libx264 -x264-params 'keyint=48\\:stats=/tmp/x'", "keyint=48\\:stats=/tmp/x"],
    [`-c:v libx264 -x264-params "keyint='48:stats=/tmp/x'"`, "keyint='48:stats=/tmp/x'"],
    ["-c:v libx264 -x264-params keyint=48:stats=/tmp/x", "keyint=48:stats=/tmp/x"],
    ["-c:v libx264 -x264-params keyint", "keyint"],
    ["-c:v libx264 -x264-params keyint=", "keyint="],
    ["-c:v libx264 -x264-params =48", "=48"],
    ["-c:v libx265 -x265-params crf=20:crf=30", "crf=20:crf=30"],
    ["-c:v libx265 -x265-params 'crf=20:csv=/tmp/x.csv'", "crf=20:csv=/tmp/x.csv"],
    ["-c:v libsvtav1 -svtav1-params preset=8:crf=30=x", "preset=8:crf=30=x"],
    ["-c:v libaom-av1 -aom-params tune=ssim=1", "tune=ssim=1"],
    ["-c:v libx264 -x264opts keyint=48=stats=/tmp/x", "keyint=48=stats=/tmp/x"],
    ["-c:v libx264 -x264opts keyint=48::scenecut=0", "keyint=48::scenecut=0"],
  ])("refuses %s", (option, token) => {
    expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token });
  });

  it.each([
    "-c:v libx264 -x264-params keyint=48:scenecut=0:deblock=-1,-1",
    "-c:v libx265 -x265-params 'master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400'",
    "-c:v libsvtav1 -svtav1-params preset=8:film-grain=8",
    "-c:v libaom-av1 -aom-params tune=ssim:enable-tpl-model=1",
    "-c:v libx264 -x264opts no-scenecut:keyint=48",
  ])("accepts %s", (option) => {
    expect(() => argvOf(withInput(`${option} out.mp4`))).not.toThrow();
  });
});

describe("H. formats the command chooses (case 44)", () => {
  const subtitles = (url: string) => `-vf subtitles=${url}`;

  it.each([
    ["https://example.com/clip.mp4", ""],
    ["https://example.com/subs", ""],
    ["https://example.com/subs.txt", ""],
    ["https://example.com/subs.srt", "-f mp4"],
    ["https://example.com/subs.srt", "-f mpegts"],
    ["https://example.com/subs.vtt", "-f image2"],
  ])("refuses subtitles= on %s read with %j: only subtitle files, read as subtitles", (url, format) => {
    expect(refusalOf(withInput(`${format} -i ${url} ${subtitles(url)} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "subtitles" });
  });

  it("refuses ass= on anything but .ass/.ssa", () => {
    const url = "https://example.com/subs.srt";
    expect(refusalOf(withInput(`-i ${url} -vf ass=${url} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "ass" });
  });

  it.each(["hls", "dash", "concat", "lavfi", "tee", "image2pipe", "m3u8", "ffmetadata", "sdp", "rtp", "data", "tty", "subviewer"])(
    "refuses -f %s before an input: only plain file formats may be forced",
    (format) => {
      expect(refusalOf(`ffmpeg -f ${format} -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: format });
    },
  );

  it.each([
    ["https://example.com/subs.srt", "-f srt"], ["https://example.com/subs.SRT", ""], ["https://example.com/subs.vtt", "-f webvtt"],
    ["https://example.com/subs.ass?sig=1", "-f ass"],
  ])("accepts subtitles= on %s read with %j", (url, format) => {
    expect(argvOf(withInput(`${format} -i ${url} ${subtitles(url)} out.mp4`))).toContain("subtitles=/job/in/1");
  });
});
