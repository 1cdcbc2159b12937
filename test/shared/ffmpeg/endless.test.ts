/**
 * Work without end (docs/security.md case 18.9): expressions that loop, wherever ffmpeg
 * evaluates one, and outputs whose streams nothing stops.
 */
import { describe, expect, it } from "vitest";
import { argvOf, IN, refusalOf } from "./helpers";

const withInput = (tail: string) => `ffmpeg -i ${IN} ${tail}`;
const LOGO = "https://example.com/logo.png";
const SONG = "https://example.com/song.mp3";

describe("expressions that can loop", () => {
  it.each([
    [`-vf "setpts='while(1,1)'"`, "setpts"],
    [`-af "volume='while(1,1)':eval=frame"`, "volume"],
    [`-vf "fade=t=in:enable='while(1,1)'"`, "fade"],
    ["-vf 'select=while(1\\,1)'", "select"],
    ["-vf \"select='while (1,1)'\"", "select"],
    ["-vf \"select='wh\\ile(1,1)'\"", "select"],
    ["-vf \"select='while-(1,1)'\"", "select"],
    [`-vf "select='1+while#(1,1)'"`, "select"],
    ["-vf \"drawtext=text='%{eif\\:while(1,1)\\:d}'\"", "drawtext"],
    ["-vf \"lutyuv=y='taylor(taylor(taylor(1,1),1),1)'\"", "lutyuv"],
    ["-vf \"hue=h='root(root(root(t,1),1),1)'\"", "hue"],
    ["-vf \"overlay=x='st(0,0);while(lt(ld(0),1e9),st(0,ld(0)+1))'\"", "overlay"],
    ["-vf \"crop=w='if(1,while(1,1),1)'\"", "crop"],
    [`-af "asetnsamples=n='while(1,1)'"`, "asetnsamples"],
    ["-filter_complex \"[0:v]setpts=PTS,select='while(1,1)'[v]\" -map [v]", "select"],
  ])("refuses %s", (option, filter) => {
    expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", status: 400, token: filter });
  });

  it("refuses a looping expression in -force_key_frames, which ffmpeg evaluates for every frame", () => {
    expect(refusalOf(withInput("-force_key_frames 'expr:while(1,1)' out.mp4"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "expr:while(1,1)" });
  });

  it("accepts metadata that says while (…): ffmpeg stores it and never evaluates it", () => {
    expect(argvOf(withInput("-metadata 'title=Wait while (we) load' out.mp4"))).toContain("title=Wait while (we) load");
  });

  it.each([
    "-vf setpts=0.5*PTS", "-vf \"setpts='if(eq(N,0),0,PTS)'\"", `-af "volume='if(lt(t,5),0.5,1)':eval=frame"`, "-vf \"select='not(mod(n,10))'\"",
    `-vf "fade=t=in:st=0:d=1:enable='between(t,0,2)'"`, "-vf \"overlay=x='st(0,t*10);ld(0)'\"", "-vf \"drawtext=text='%{eif\\:t\\:d}':fontsize=24\"",
    "-vf \"drawtext=text='meanwhile rooted':fontsize=24\"", "-force_key_frames 'expr:gte(t,n_forced*2)'",
  ])("accepts %s", (option) => {
    expect(argvOf(withInput(`${option} out.mp4`)).length).toBeGreaterThan(0);
  });
});

describe("endless sources need every stream of the output stopped", () => {
  it.each([
    [`-loop 1 -i ${LOGO} -frames:a 1 out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -aframes 1 out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -i ${SONG} -map 0:v -map 1:a? -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -i ${SONG} -map 0:v -map 1:a -map -1:a -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -i ${SONG} -map 0:v -map 1:a -an -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -filter_complex "[0:v]scale=320:240[v]" -map [v] -frames:a 1 out.mp4`, "-loop"],
    [`-loop 1 -i ${LOGO} -frames:v:0 1 out.mp4`, "-loop"],
    [`-i ${IN} -filter_complex "color=c=red[v];sine[a]" -map [v] -map [a] -shortest out.mp4`, "color"],
    [`-i ${IN} -filter_complex "color=c=red[v];sine[a]" -map [v] -map [a] -frames:v 10 out.mp4`, "color"],
    [`-i ${IN} -map 0:v -map 0:a -af apad -frames:v 10 out.mp4`, "apad"],
    [`-i ${IN} -map 0:a -af apad -shortest out.m4a`, "apad"],
    [`-i ${IN} -vf tpad=stop=-1 -map 0:v -shortest out.mp4`, "tpad"],
  ])("refuses %s", (command, token) => {
    expect(refusalOf(`ffmpeg ${command}`)).toMatchObject({ code: "LIMIT_EXCEEDED", status: 400, token });
  });

  it.each([
    `-loop 1 -i ${LOGO} -t 5 out.mp4`,
    `-loop 1 -i ${LOGO} -frames 1 out.png`,
    `-loop 1 -i ${LOGO} -frames:v 1 out.png`,
    `-loop 1 -i ${LOGO} -vframes 25 out.mp4`,
    `-loop 1 -i ${LOGO} -i ${SONG} -map 0:v -map 1:a -shortest out.mp4`,
    `-loop 1 -i ${LOGO} -i ${SONG} -map 0 -map 1 -shortest out.mp4`,
    `-i ${IN} -filter_complex "anullsrc[a]" -map 0:v -map [a] -shortest out.mp4`,
    `-i ${IN} -i ${SONG} -map 0:v -map 1:a -af apad -shortest out.mp4`,
    `-i ${IN} -filter_complex "color=c=red[v];sine[a]" -map [v] -map [a] -frames:v 10 -frames:a 10 out.mp4`,
    `-i ${IN} -filter_complex "color=c=red[v]" -map [v] -to 3 out.mp4`,
    `-i ${IN} -vf tpad=stop=-1 -map 0:v -frames:v 100 out.mp4`,
  ])("accepts %s", (command) => {
    expect(argvOf(`ffmpeg ${command}`).length).toBeGreaterThan(0);
  });
});

describe("-shortest with the streams ffmpeg picks itself", () => {
  const COVER = "https://example.com/cover.jpg";
  const STILL = `-loop 1 -i ${COVER} -i ${SONG}`;

  it.each([
    `${STILL} -c:v libx264 -tune stillimage -c:a aac -shortest out.mp4`,
    `${STILL} -vf scale=1280:720 -c:v libx264 -c:a aac -shortest out.mp4`,
    `${STILL} -r 1 -c:v libx264 -c:a aac -shortest out.mp4`,
    `${STILL} -pix_fmt yuv420p -c:v libx264 -c:a aac -b:a 192k -shortest out.mp4`,
    `-loop 1 -i ${COVER} -loop 1 -i ${LOGO} -i ${SONG} -shortest out.mp4`,
    `-loop 1 -c:v mjpeg -i ${COVER} -i ${SONG} -shortest out.mp4`,
    `${STILL} -shortest out.mkv`,
    `${STILL} -f mov -shortest out.mp4`,
  ])("accepts %s: a looped picture is video only, so the audio comes from an input that ends", (command) => {
    expect(argvOf(`ffmpeg ${command}`).length).toBeGreaterThan(0);
  });

  it.each([
    [`${STILL} -an -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${COVER} -an -i ${SONG} -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${COVER} -loop 1 -i ${LOGO} -shortest out.mp4`, "-loop"],
    [`-loop 1 -i ${COVER} -shortest out.mp4`, "-loop"],
    [`${STILL} -af apad -shortest out.mp4`, "-loop"],
    [`${STILL} -filter_complex "[0:v]scale=320:240" -shortest out.mp4`, "-loop"],
    [`-i ${SONG} -f image2 -loop 1 -c:a mp3 -i ${COVER} -shortest out.mp4`, "-loop"],
    [`-f image2 -loop 1 -acodec mp3 -i ${COVER} -i ${SONG} -shortest out.mp4`, "-loop"],
    [`-loop 1 -c:a mp3 -i ${COVER} -frames:v 1 out.mp4`, "-loop"],
    [`${STILL} -shortest out.gif`, "-loop"],
    [`${STILL} -f gif -shortest out.gif`, "-loop"],
    [`${STILL} -f image2 -shortest frame_%03d.png`, "-loop"],
  ])("refuses %s: the picked audio may be missing or endless, so nothing surely ends the picture", (command, token) => {
    expect(refusalOf(`ffmpeg ${command}`)).toMatchObject({ code: "LIMIT_EXCEEDED", status: 400, token });
  });

  it("refuses -stream_loop -1 even with -shortest: that input may carry the audio ffmpeg picks", () => {
    expect(refusalOf(`ffmpeg -stream_loop -1 -i ${IN} -i ${SONG} -shortest out.mp4`)).toMatchObject({ code: "LIMIT_EXCEEDED", status: 400, token: "-1" });
  });
});

describe("filters that multiply their input", () => {
  it.each([
    ["-af aloop=loop=10:size=2e9", "aloop"],
    ["-af aloop=3:1e8", "aloop"],
  ])("caps the samples aloop holds: %s", (option, token) => {
    expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token });
  });

  it("accepts aloop over a bounded stretch", () => {
    expect(argvOf(withInput("-af aloop=loop=3:size=48000 out.mp4")).join(" ")).toContain("aloop");
  });

  it.each(["-vf zoompan=z=1.5:d=1501", `-vf "zoompan=d='if(eq(on,0),5000,1)'"`, "-vf zoompan=d=100000"])(
    "needs a bounded output for %s, which may make over a minute of frames from one input frame",
    (option) => {
      expect(refusalOf(withInput(`${option} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: "zoompan" });
      expect(argvOf(withInput(`${option} -t 10 out.mp4`)).join(" ")).toContain("zoompan");
    },
  );

  it.each(["-vf zoompan=z=1.5:d=1", "-vf zoompan=z=1.5", `-vf "zoompan=z='min(zoom+0.0015,1.5)':d=125:s=1280x720"`, "-vf zoompan=d=1500"])(
    "accepts %s on a finite input without a bound: a photo's pan ends with its input",
    (option) => {
      expect(argvOf(withInput(`${option} out.mp4`)).join(" ")).toContain("zoompan");
    },
  );
});
