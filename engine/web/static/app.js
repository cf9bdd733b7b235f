// mudsim in a browser: the event stream, an input line with history, and a status bar,
// over the websocket at /ws (messages: engine/web/messages.py). Text from the server is
// only ever set as textContent, never parsed as HTML. The input line keeps the focus (a
// click on an exit or Send gives it back), the log follows its last line when it was
// there already or the player acts, and a closed connection leaves nothing to click
// but Reconnect.
"use strict";

(function () {
  const MAX_SHOWN = 2000; // paragraphs kept in the log
  const MAX_HISTORY = 200; // lines kept for the up and down arrows

  const $ = (id) => document.getElementById(id);
  const log = $("log");
  const form = $("input-form");
  const line = $("line");
  const promptLabel = $("prompt");
  const closedBox = $("closed");
  const closedText = $("closed-text");
  const reconnectButton = $("reconnect");
  const sendButton = $("send");
  const connection = $("connection");

  const state = {
    socket: null,
    prompt: "",
    hidden: false,
    closeText: "",
    name: "",
    room: null, // Room.Info
    here: [],
    history: [],
    at: 0, // where the arrows are in history (history.length: the line being typed)
    draft: "",
  };

  function show(text, classes, extra) {
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    const paragraph = document.createElement("p");
    paragraph.textContent = text;
    for (const name of classes || []) {
      if (/^s-[a-z_]+$/.test(name)) {
        paragraph.classList.add(name);
      }
    }
    if (extra) {
      paragraph.classList.add(extra);
    }
    log.appendChild(paragraph);
    while (log.childElementCount > MAX_SHOWN) {
      log.removeChild(log.firstElementChild);
    }
    if (atBottom) {
      scrollToEnd();
    }
  }

  function scrollToEnd() {
    log.scrollTop = log.scrollHeight;
  }

  function focusLine() {
    if (!line.disabled) {
      line.focus();
    }
  }

  function setConnected(connected) {
    line.disabled = !connected;
    sendButton.disabled = !connected;
  }

  function setPrompt(text, hidden) {
    state.prompt = text;
    state.hidden = hidden;
    promptLabel.textContent = text.trim() || ">";
    line.type = hidden ? "password" : "text";
    line.autocomplete = hidden ? "current-password" : "off";
  }

  function renderStatus() {
    const room = state.room;
    $("room").textContent = room ? String(room.name) : "(not logged in)";
    const exits = $("exits");
    exits.replaceChildren();
    const names = room && room.exits && state.socket ? Object.keys(room.exits).sort() : [];
    for (const name of names) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = name;
      button.setAttribute("aria-label", "go " + name);
      button.addEventListener("click", () => {
        submit("go " + name);
        focusLine(); // typing goes on in the input line, not into the button
      });
      exits.appendChild(button);
    }
    if (names.length === 0) {
      exits.textContent = room ? "none" : "";
    }
    const others = state.here.filter((name) => name !== state.name);
    $("here").textContent = room ? (others.length ? others.join(", ") : "nobody else") : "";
  }

  function received(message) {
    switch (message.type) {
      case "hello":
        $("world").textContent = String(message.world) + " (mudsim)";
        document.title = String(message.world) + " - mudsim";
        if (Number.isInteger(message.max_line) && message.max_line > 0) {
          line.maxLength = message.max_line;
        }
        break;
      case "text":
        show(String(message.text), Array.isArray(message.classes) ? message.classes : []);
        break;
      case "prompt":
        setPrompt(String(message.text), message.hidden === true);
        break;
      case "gmcp":
        if (message.package === "Room.Info" && message.data) {
          state.room = message.data;
        } else if (message.package === "Char.Status" && message.data) {
          state.name = String(message.data.name);
        }
        renderStatus();
        break;
      case "here":
        if (state.room && message.room === state.room.id && Array.isArray(message.names)) {
          state.here = message.names.map(String);
          renderStatus();
        }
        break;
      case "close":
        state.closeText = String(message.text || "");
        break;
      default:
        break;
    }
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(scheme + "//" + window.location.host + "/ws");
    state.socket = socket;
    state.closeText = "";
    state.room = null;
    state.here = [];
    state.name = "";
    renderStatus();
    setPrompt("", false);
    setConnected(false);
    closedBox.hidden = true;
    connection.textContent = "connecting";
    socket.addEventListener("open", () => {
      connection.textContent = "connected";
      setConnected(true);
      focusLine();
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      if (message && typeof message === "object") {
        received(message);
      }
    });
    socket.addEventListener("close", (event) => {
      if (state.socket !== socket) {
        return;
      }
      state.socket = null;
      let why = state.closeText || "The connection closed.";
      if (event.code === 1009) {
        why += " (A message was larger than the server takes.)";
      } else if (event.code === 1006 && !state.closeText) {
        why = "The connection was lost, or the server could not be reached.";
      }
      connection.textContent = "closed";
      closedText.textContent = why;
      closedBox.hidden = false; // the log's box shrinks: its last line stays in view
      setConnected(false);
      setPrompt("", false);
      state.room = null; // no exit to click, nobody to see
      state.here = [];
      renderStatus();
      scrollToEnd();
      reconnectButton.focus();
    });
  }

  function submit(text) {
    const socket = state.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      return;
    }
    socket.send(JSON.stringify({ type: "line", text: text }));
    show(state.prompt + (state.hidden ? "" : text), [], "echo");
    scrollToEnd(); // the player acted: the answer comes below
    if (!state.hidden && text.trim() && state.history[state.history.length - 1] !== text) {
      state.history.push(text);
      if (state.history.length > MAX_HISTORY) {
        state.history.shift();
      }
    }
    state.at = state.history.length;
    state.draft = "";
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = line.value;
    line.value = "";
    submit(text);
    focusLine(); // after a click on Send too
  });

  line.addEventListener("keydown", (event) => {
    if (state.hidden || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) {
      return;
    }
    event.preventDefault();
    if (state.at === state.history.length) {
      state.draft = line.value;
    }
    if (event.key === "ArrowUp") {
      state.at = Math.max(0, state.at - 1);
    } else {
      state.at = Math.min(state.history.length, state.at + 1);
    }
    line.value = state.at === state.history.length ? state.draft : state.history[state.at];
  });

  reconnectButton.addEventListener("click", connect);
  connect();
}());
